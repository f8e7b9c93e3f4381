// provider.go: an infrastructure tool's code under test (a Terraform provider's resource)
package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// CreateProject creates a project on the management plane with an organisation key, through
// the provider's HTTP client; its id.
func CreateProject(client *http.Client, serviceURL, orgKey, name, slug string) (string, error) {
	body := fmt.Sprintf(`{"name": %q, "slug": %q}`, name, slug)
	request, _ := http.NewRequest("POST", serviceURL+"/v1/projects", strings.NewReader(body))
	request.Header.Set("Authorization", "Bearer "+orgKey)
	request.Header.Set("Content-Type", "application/json")
	answer, err := client.Do(request)
	if err != nil {
		return "", err
	}
	defer answer.Body.Close()
	var created struct {
		Project struct{ ProjectID string }
		Error   struct{ Code, Message string }
	}
	if err := json.NewDecoder(answer.Body).Decode(&created); err != nil {
		return "", err
	}
	if answer.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("%d %s: %s", answer.StatusCode, created.Error.Code, created.Error.Message)
	}
	return created.Project.ProjectID, nil
}
