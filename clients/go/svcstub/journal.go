package svcstub

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Event is one JSON object a client sent (an exposure, a signal, a vendor event, a target).
type Event = map[string]any

// Recorded is everything clients sent to be kept.
type Recorded struct {
	Events    []Event `json:"events"`    // items of vendor /batch bodies
	SvcEvents []Event `json:"svcEvents"` // events of /v1/capture bodies
	Targets   []Event `json:"targets"`   // /v1/targets/register bodies
	Dropped   struct {
		Events    int `json:"events"`
		SvcEvents int `json:"svcEvents"`
		Targets   int `json:"targets"`
	} `json:"dropped"`
}

// Exposures are the exposures among the events /v1/capture kept.
func (r Recorded) Exposures() []Event {
	var exposures []Event
	for _, event := range r.SvcEvents {
		if event["type"] == "exposure" {
			exposures = append(exposures, event)
		}
	}
	return exposures
}

// FaultRecord is the fault that fired on a request, and where it came from.
type FaultRecord struct {
	Mode    Mode   `json:"mode"`
	Source  string `json:"source"` // header, query, armed or rate-limit
	ArmedID int    `json:"armedId,omitempty"`
	Step    *int   `json:"step,omitempty"`
}

// Request is one request of the journal, in full.
type Request struct {
	Seq        int               `json:"seq"`
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	Query      map[string]any    `json:"query"`
	Route      *string           `json:"route"`  // nil: an unknown path
	Status     *int              `json:"status"` // nil: no HTTP answer (reset, hang, a client that left)
	ClientGone bool              `json:"clientGone"`
	Fault      *FaultRecord      `json:"fault"`
	ArrivedMs  float64           `json:"arrivedMs"`
	DurationMs float64           `json:"durationMs"`
	Warning    *string           `json:"warning"`
	RetryAfter *int              `json:"retryAfter"`
	Headers    map[string]string `json:"headers"` // lower-case names, secrets redacted
	Body       *RecordedBody     `json:"body"`    // nil: none was sent
	Answer     *struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    *RecordedBody     `json:"body"`
	} `json:"answer"` // nil: no HTTP answer
	Curl string `json:"curl"` // a curl line that sends it again
}

// StatusOr is the answer's status, or 0 when none was given.
func (r Request) StatusOr() int {
	if r.Status == nil {
		return 0
	}
	return *r.Status
}

// Text is the body the request sent ("" if none), a key in it hidden as in Headers.
func (r Request) Text() string { return r.Body.String() }

// JSON decodes the body the request sent into v, as json.Unmarshal does; an error says which
// request had no body, or one that did not decode.
func (r Request) JSON(v any) error {
	if r.Body == nil {
		return fmt.Errorf("svcstub: request #%d (%s %s) has no body", r.Seq, r.Method, r.Path)
	}
	if err := json.Unmarshal([]byte(r.Body.String()), v); err != nil {
		return fmt.Errorf("svcstub: the body of request #%d (%s %s): %w", r.Seq, r.Method, r.Path, err)
	}
	return nil
}

// RecordedBody is a body as sent: Text when it is UTF-8, else Base64.
type RecordedBody struct {
	Text   *string `json:"text"`
	Base64 *string `json:"base64"`
	Bytes  int     `json:"bytes"`
}

// String is the body's bytes ("" for none).
func (b *RecordedBody) String() string {
	switch {
	case b == nil:
		return ""
	case b.Text != nil:
		return *b.Text
	case b.Base64 != nil:
		raw, _ := base64.StdEncoding.DecodeString(*b.Base64)
		return string(raw)
	}
	return ""
}

// NamespaceInfo is a namespace as the stub lists it.
type NamespaceInfo struct {
	Name        string         `json:"name"`
	BoundKeys   int            `json:"boundKeys"`
	Flags       int            `json:"flags"`
	ArmedFaults int            `json:"armedFaults"`
	Recorded    map[string]int `json:"recorded"`
}

// gapsMs is the time between each request's arrival and the next one's.
func gapsMs(requests []Request) []float64 {
	gaps := make([]float64, 0, len(requests))
	for i := 1; i < len(requests); i++ {
		gaps = append(gaps, math.Round((requests[i].ArrivedMs-requests[i-1].ArrivedMs)*1000)/1000)
	}
	return gaps
}

func listed(requests []Request) string {
	if len(requests) == 0 {
		return "  (none)"
	}
	lines := make([]string, len(requests))
	for i, r := range requests {
		status := "no answer"
		if r.Status != nil {
			status = fmt.Sprint(*r.Status)
		}
		lines[i] = fmt.Sprintf("  #%d %s %s -> %s", r.Seq, r.Method, r.Path, status)
	}
	return strings.Join(lines, "\n")
}

func shown(events []Event) string {
	if len(events) == 0 {
		return "(none)"
	}
	text, _ := json.MarshalIndent(events, "", "  ")
	return string(text)
}
