// Each test has a namespace of its own on the run's one stub: what it serves, arms and records
// stays there, and is gone when the test ends.
package svcstub_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// checkNamespace checks the test's namespace is its name made safe, then 8 random hex digits.
func checkNamespace(t *testing.T, namespace, readable string) {
	t.Helper()
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(readable) + `-[0-9a-f]{8}$`).MatchString(namespace) {
		t.Errorf("namespace %q is not %q and a random suffix", namespace, readable)
	}
	if len(namespace) > 64 {
		t.Errorf("namespace %q is %d characters; the stub takes 64", namespace, len(namespace))
	}
}

func TestParallelTestsAreIsolated(t *testing.T) {
	const tests = 50
	var (
		mu         sync.Mutex
		namespaces = map[string]bool{}
	)
	t.Run("group", func(t *testing.T) {
		for i := 0; i < tests; i++ {
			i := i
			t.Run(fmt.Sprintf("test-%02d", i), func(t *testing.T) {
				t.Parallel()
				stub := svcstub.New(t)
				mu.Lock()
				namespaces[stub.Namespace] = true
				mu.Unlock()
				checkNamespace(t, stub.Namespace, fmt.Sprintf("TestParallelTestsAreIsolated-group-test-%02d", i))

				mine := fmt.Sprintf("value of test %02d", i)
				stub.SetFixtures(map[string]any{"flags": map[string]any{"mine": map[string]any{"type": "string", "value": mine}}})
				faulted := i%2 == 0
				if faulted {
					stub.Arm(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}, TTLRequests: 1})
				}

				first := postEvaluate(t, stub.URL, "mine")
				if faulted && first.status != 500 {
					t.Errorf("the first evaluate: %d %s, want this test's 500", first.status, first.raw)
				}
				if !faulted {
					checkServed(t, first, mine)
				}
				checkServed(t, postEvaluate(t, stub.URL, "mine"), mine)
				if armed := stub.Armed(); len(armed) != 0 {
					t.Errorf("armed = %+v, want none: its one request was faulted", armed)
				}

				requests := stub.Requests(svcstub.RouteEvaluate)
				if len(requests) != 2 {
					t.Fatalf("requests to evaluate = %+v, want this test's two", requests)
				}
				if fault := requests[0].Fault; faulted != (fault != nil) || faulted && (fault.Mode != svcstub.Mode500 || fault.Source != "armed") {
					t.Errorf("the first request's fault = %+v, want an armed 500: %t", fault, faulted)
				}
				if requests[1].Fault != nil || requests[1].StatusOr() != 200 {
					t.Errorf("the second request = %+v, want a 200", requests[1])
				}
				if full := stub.Request(requests[1].Seq); full.Answer == nil || full.Answer.Body == nil || full.Answer.Body.Text == nil ||
					!strings.Contains(*full.Answer.Body.Text, mine) {
					t.Errorf("the journal's second request was not answered %q: %+v", mine, full.Answer)
				}
			})
		}
	})
	if len(namespaces) != tests {
		t.Errorf("%d tests had %d namespaces", tests, len(namespaces))
	}

	stubURL, err := svcstub.RunURL()
	if err != nil {
		t.Fatal(err)
	}
	left, err := svcstub.NewClient(stubURL).Namespaces(within(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, namespace := range left {
		if namespaces[namespace.Name] {
			t.Errorf("namespace %s is still there after its test ended", namespace.Name)
		}
	}
}

// checkServed checks a client was served value for the flag "mine".
func checkServed(t *testing.T, answer clientAnswer, value string) {
	t.Helper()
	var body struct {
		Decisions []struct{ FlagKey, Value any }
	}
	if answer.status != 200 || json.Unmarshal(answer.raw, &body) != nil || len(body.Decisions) != 1 || body.Decisions[0].Value != value {
		t.Errorf("evaluate: %d %s, want %q served", answer.status, answer.raw, value)
	}
}

func TestTheNamespaceIsNamedAfterTheTest(t *testing.T) {
	long := strings.Repeat("x", 80)
	for _, tc := range []struct{ name, readable string }{
		{"plain", "TestTheNamespaceIsNamedAfterTheTest-plain"},
		{"a b&üc", "TestTheNamespaceIsNamedAfterTheTest-a_b-c"},
		{"spaces, symbols & ünïcode", "TestTheNamespaceIsNamedAfterTheTest-spaces-_symbols"}, // cut at 55, then trimmed
		{"trailing...", "TestTheNamespaceIsNamedAfterTheTest-trailing"},
		{long, ("TestTheNamespaceIsNamedAfterTheTest-" + long)[:55]},
	} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stub := svcstub.New(t)
			checkNamespace(t, stub.Namespace, tc.readable)
			if stub.URL != stub.BaseURL+"/ns/"+stub.Namespace {
				t.Errorf("URL = %s, want BaseURL/ns/Namespace", stub.URL)
			}
			if again := svcstub.New(t); again.Namespace == stub.Namespace {
				t.Errorf("two stubs of one test share the namespace %s", stub.Namespace)
			}
		})
	}
}
