package svcstub

import (
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

// Request is one request as the journal lists it.
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
}

// StatusOr is the answer's status, or 0 when none was given.
func (r Request) StatusOr() int {
	if r.Status == nil {
		return 0
	}
	return *r.Status
}

// RequestInFull is one request with the body it sent, the answer it got and a curl line.
type RequestInFull struct {
	Request
	Body   *RecordedBody `json:"body"`
	Answer *struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    *RecordedBody     `json:"body"`
	} `json:"answer"`
	Curl string `json:"curl"`
}

// RecordedBody is a body as sent: Text when it is UTF-8, else Base64.
type RecordedBody struct {
	Text   *string `json:"text"`
	Base64 *string `json:"base64"`
	Bytes  int     `json:"bytes"`
}

// NamespaceInfo is a namespace as the stub lists it.
type NamespaceInfo struct {
	Name        string         `json:"name"`
	BoundKeys   int            `json:"boundKeys"`
	Flags       int            `json:"flags"`
	ArmedFaults int            `json:"armedFaults"`
	Recorded    map[string]int `json:"recorded"`
}

func exposureMissing(exposures []Event, flagKey, targetingKey, variant string) string {
	for _, e := range exposures {
		if e["flagKey"] == flagKey && e["targetingKey"] == targetingKey && (variant == "" || e["variant"] == variant) {
			return ""
		}
	}
	wanted := fmt.Sprintf("exposure of %s for %s", flagKey, targetingKey)
	if variant != "" {
		wanted += fmt.Sprintf(" (variant %s)", variant)
	}
	return fmt.Sprintf("no %s; exposures recorded:\n%s", wanted, shown(exposures))
}

func unexpectedRequests(requests []Request, route Route) string {
	if len(requests) == 0 {
		return ""
	}
	return fmt.Sprintf("expected no request to %s, got %d:\n%s", route, len(requests), listed(requests))
}

func warnedRequests(requests []Request) string {
	var lines []string
	for _, r := range requests {
		if r.Warning != nil {
			lines = append(lines, fmt.Sprintf("  #%d %s %s: %s", r.Seq, r.Method, r.Path, *r.Warning))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	noun := "request"
	if len(lines) > 1 {
		noun = "requests"
	}
	return fmt.Sprintf("%d %s used a key where the service refuses it:\n%s", len(lines), noun, strings.Join(lines, "\n"))
}

// retryAfterSlackMs is what a timer may fire early by before a wait counts as short.
const retryAfterSlackMs = 5.0

func earlyRetries(requests []Request, route Route) string {
	var lines []string
	for i := 1; i < len(requests); i++ {
		before, after := requests[i-1], requests[i]
		if before.RetryAfter == nil {
			continue
		}
		waited := after.ArrivedMs - (before.ArrivedMs + before.DurationMs)
		if waited+retryAfterSlackMs < float64(*before.RetryAfter)*1000 {
			lines = append(lines, fmt.Sprintf("  #%d came %.0f ms after #%d was answered %d with Retry-After: %d",
				after.Seq, waited, before.Seq, before.StatusOr(), *before.RetryAfter))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("retried %s before Retry-After allowed:\n%s", route, strings.Join(lines, "\n"))
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
