// checkout.go: the application code under test
package checkout

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Variant asks the control-point service which checkout a user gets, and falls back to
// "control" when the service cannot say.
func Variant(serviceURL, userID string) string {
	body := `{"targetingKey": "` + userID + `", "flagKeys": ["checkout-v2"]}`
	request, _ := http.NewRequest("POST", serviceURL+"/v1/flags/evaluate", strings.NewReader(body))
	request.Header.Set("Authorization", "Bearer project-api-key_checkout")
	request.Header.Set("Content-Type", "application/json")
	answer, err := (&http.Client{Timeout: 2 * time.Second}).Do(request)
	if err != nil {
		return "control"
	}
	defer answer.Body.Close()
	var decided struct {
		Decisions []struct{ Value any }
	}
	if answer.StatusCode != 200 || json.NewDecoder(answer.Body).Decode(&decided) != nil || len(decided.Decisions) == 0 {
		return "control"
	}
	if variant, ok := decided.Decisions[0].Value.(string); ok {
		return variant
	}
	return "control"
}
