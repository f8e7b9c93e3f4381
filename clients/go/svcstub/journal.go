package svcstub

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
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

// Request is one request of the journal, in full. It prints as one line (String), with %v and
// %+v alike; its fields are what the stub recorded.
type Request struct {
	Seq        int            `json:"seq"`
	Method     string         `json:"method"`
	Path       string         `json:"path"`
	Query      map[string]any `json:"query"`
	Route      Route          `json:"route"`  // "": an unknown path (no route's)
	Status     *int           `json:"status"` // nil: no HTTP answer (reset, hang, a client that left); see StatusOr
	ClientGone bool           `json:"clientGone"`
	Fault      *FaultRecord   `json:"fault"` // nil: none fired
	// Arrived is when the request arrived, since the stub started, on one clock for every
	// request: the gap between two requests is the difference of theirs.
	Arrived time.Duration `json:"-"`
	// Duration is how long the stub took to answer it (a delay fault's included).
	Duration time.Duration `json:"-"`
	Warning  *string       `json:"warning"`
	// RetryAfter is the Retry-After the stub answered with (whole seconds); nil when it gave none.
	RetryAfter *time.Duration    `json:"-"`
	Headers    map[string]string `json:"headers"` // lower-case names, secrets redacted
	Body       *RecordedBody     `json:"body"`    // nil: none was sent
	Answer     *struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    *RecordedBody     `json:"body"`
	} `json:"answer"` // nil: no HTTP answer
	Curl string `json:"curl"` // a curl line that sends it again
}

// UnmarshalJSON reads a request as the stub lists it (its times in ms, Retry-After in seconds).
func (r *Request) UnmarshalJSON(data []byte) error {
	type plain Request
	wire := struct {
		*plain
		ArrivedMs  float64  `json:"arrivedMs"`
		DurationMs float64  `json:"durationMs"`
		RetryAfter *float64 `json:"retryAfter"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	r.Arrived, r.Duration = milliseconds(wire.ArrivedMs), milliseconds(wire.DurationMs)
	r.RetryAfter = nil
	if wire.RetryAfter != nil {
		seconds := time.Duration(*wire.RetryAfter * float64(time.Second))
		r.RetryAfter = &seconds
	}
	return nil
}

// MarshalJSON writes a request as the stub lists it, so that it reads back the same.
func (r Request) MarshalJSON() ([]byte, error) {
	type plain Request
	var route *Route
	if r.Route != "" {
		route = &r.Route
	}
	return json.Marshal(struct {
		plain
		Route      *Route   `json:"route"`
		ArrivedMs  float64  `json:"arrivedMs"`
		DurationMs float64  `json:"durationMs"`
		RetryAfter *float64 `json:"retryAfter"`
	}{plain(r), route, inMs(r.Arrived), inMs(r.Duration), count(r.RetryAfter, time.Second)})
}

// inMs is d in ms, as the stub writes them.
func inMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// count is d in units of unit (nil for none).
func count(d *time.Duration, unit time.Duration) *float64 {
	if d == nil {
		return nil
	}
	n := float64(*d) / float64(unit)
	return &n
}

// milliseconds is ms as a Duration, to the microsecond the stub records.
func milliseconds(ms float64) time.Duration {
	return time.Duration(math.Round(ms*1000)) * time.Microsecond
}

// String is the request in one line: "#3 POST /v1/flags/evaluate -> 500 (fault 500, armed)".
func (r Request) String() string {
	status := "no answer"
	if r.Status != nil {
		status = strconv.Itoa(*r.Status)
	}
	line := fmt.Sprintf("#%d %s %s -> %s", r.Seq, r.Method, r.Path, status)
	if r.Fault != nil {
		line += fmt.Sprintf(" (fault %s, %s)", r.Fault.Mode, r.Fault.Source)
	}
	if r.ClientGone {
		line += " (the client left)"
	}
	return line
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

// gaps is the time between each request's arrival and the next one's.
func gaps(requests []Request) []time.Duration {
	between := make([]time.Duration, 0, len(requests))
	for i := 1; i < len(requests); i++ {
		between = append(between, requests[i].Arrived-requests[i-1].Arrived)
	}
	return between
}

func shown(events []Event) string {
	if len(events) == 0 {
		return "(none)"
	}
	text, _ := json.MarshalIndent(events, "", "  ")
	return string(text)
}
