// The package's words are the stub's: every fault mode, selector, route name, arming member,
// coverage member, query parameter and path it uses, checked against the stub's own description of its control
// plane (stub/openapi.json), so the package cannot drift from the stub.
package svcstub_test

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

const openAPIPath = "../../../stub/openapi.json"

// openAPI is the part of the stub's OpenAPI document these tests read.
type openAPI struct {
	Info struct {
		Version     string `json:"version"`
		Description string `json:"description"`
	} `json:"info"`
	Paths      map[string]map[string]operation `json:"paths"`
	Components struct {
		Schemas    map[string]schema    `json:"schemas"`
		Parameters map[string]parameter `json:"parameters"`
	} `json:"components"`
}

type operation struct {
	Parameters []parameter `json:"parameters"`
}

type parameter struct {
	Ref  string `json:"$ref"`
	Name string `json:"name"`
	In   string `json:"in"`
}

type schema struct {
	Enum       []string                   `json:"enum"`
	Properties map[string]json.RawMessage `json:"properties"`
	OneOf      []schema                   `json:"oneOf"`
	Examples   []json.RawMessage          `json:"examples"`
}

func readOpenAPI(t *testing.T) openAPI {
	t.Helper()
	raw, err := os.ReadFile(openAPIPath)
	if err != nil {
		t.Fatalf("the stub's OpenAPI document: %v", err)
	}
	var document openAPI
	if err := json.Unmarshal(raw, &document); err != nil {
		t.Fatalf("%s: %v", openAPIPath, err)
	}
	return document
}

// parametersOf names the parameters of one operation, $refs resolved.
func (d openAPI) parametersOf(t *testing.T, path, method string) []string {
	t.Helper()
	operation, ok := d.Paths[path][method]
	if !ok {
		t.Fatalf("%s %s is not in the document", strings.ToUpper(method), path)
	}
	var names []string
	for _, p := range operation.Parameters {
		if p.Ref != "" {
			resolved, ok := d.Components.Parameters[p.Ref[strings.LastIndex(p.Ref, "/")+1:]]
			if !ok {
				t.Fatalf("%s: no parameter %s", path, p.Ref)
			}
			p = resolved
		}
		names = append(names, p.Name)
	}
	return names
}

func asStrings[T ~string](list []T) []string {
	out := make([]string, len(list))
	for i, item := range list {
		out[i] = string(item)
	}
	return out
}

func TestVocabularyIsTheStubs(t *testing.T) {
	schemas := readOpenAPI(t).Components.Schemas
	for _, tc := range []struct {
		name   string
		schema string
		ours   []string
	}{
		{"Modes", "FaultMode", asStrings(svcstub.Modes)},
		{"Selectors", "Selector", asStrings(svcstub.Selectors)},
		{"Routes", "RouteName", asStrings(svcstub.Routes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			theirs := schemas[tc.schema].Enum
			if len(theirs) == 0 {
				t.Fatalf("the document has no %s enum", tc.schema)
			}
			if !reflect.DeepEqual(tc.ours, theirs) {
				t.Errorf("svcstub.%s = %q\nbut %s is %q", tc.name, tc.ours, tc.schema, theirs)
			}
		})
	}
}

func TestModeNoneIsASequenceStep(t *testing.T) {
	for _, alternative := range readOpenAPI(t).Components.Schemas["SequenceStep"].OneOf {
		if contains(alternative.Enum, string(svcstub.ModeNone)) {
			return
		}
	}
	t.Errorf("a SequenceStep cannot be %q", svcstub.ModeNone)
}

// armingFields maps each member of the arming document (and of a sequence's step) to the field
// of Fault (and of Step) that sets it.
var armingFields = map[string]string{
	"mode":        "Mode",
	"sequence":    "Sequence",
	"applyTo":     "ApplyTo",
	"ttlRequests": "TTLRequests",
	"delayMs":     "Delay",
	"status":      "Status",
	"body":        "Body",
	"retryAfter":  "RetryAfter",
	"probability": "Probability",
	"seed":        "Seed",
}

func TestFaultCoversTheArmingDocument(t *testing.T) {
	schemas := readOpenAPI(t).Components.Schemas
	var stepSchema schema
	for _, alternative := range schemas["SequenceStep"].OneOf {
		if alternative.Properties != nil {
			stepSchema = alternative
		}
	}
	for _, tc := range []struct {
		name       string
		properties map[string]json.RawMessage
		goType     reflect.Type
	}{
		{"ArmingDocument/Fault", schemas["ArmingDocument"].Properties, reflect.TypeOf(svcstub.Fault{})},
		{"SequenceStep/Step", stepSchema.Properties, reflect.TypeOf(svcstub.Step{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.properties) == 0 {
				t.Fatal("the schema has no properties")
			}
			covered := map[string]bool{}
			for member := range tc.properties {
				field, known := armingFields[member]
				if !known {
					t.Errorf("the stub's %s has a member %q this test does not know: give %s a field for it and map it here", tc.name, member, tc.goType.Name())
					continue
				}
				if _, ok := tc.goType.FieldByName(field); !ok {
					t.Errorf("%s has no field %s for the member %q", tc.goType.Name(), field, member)
				}
				covered[field] = true
			}
			for i := 0; i < tc.goType.NumField(); i++ {
				if name := tc.goType.Field(i).Name; !covered[name] {
					t.Errorf("%s.%s sets no member of the stub's %s", tc.goType.Name(), name, tc.name)
				}
			}
		})
	}
}

// TestCoverageReadsEveryMemberOfTheStubsAnswer: Coverage (and its FlagCoverage) has a field for
// each member of the stub's CoverageResponse, and no field the answer lacks.
func TestCoverageReadsEveryMemberOfTheStubsAnswer(t *testing.T) {
	answer := readOpenAPI(t).Components.Schemas["CoverageResponse"]
	var flags schema
	if err := json.Unmarshal(answer.Properties["flags"], &flags); err != nil {
		t.Fatalf("CoverageResponse's flags: %v", err)
	}
	for _, tc := range []struct {
		name       string
		properties map[string]json.RawMessage
		goType     reflect.Type
	}{
		{"CoverageResponse", answer.Properties, reflect.TypeOf(svcstub.Coverage{})},
		{"CoverageResponse/flags", flags.Properties, reflect.TypeOf(svcstub.FlagCoverage{})},
	} {
		if len(tc.properties) == 0 {
			t.Errorf("the stub's %s has no properties", tc.name)
			continue
		}
		ours := map[string]bool{}
		for i := 0; i < tc.goType.NumField(); i++ {
			member := strings.Split(tc.goType.Field(i).Tag.Get("json"), ",")[0]
			ours[member] = true
			if _, ok := tc.properties[member]; !ok {
				t.Errorf("%s.%s reads %q, which the stub's %s does not have", tc.goType.Name(), tc.goType.Field(i).Name, member, tc.name)
			}
		}
		for member := range tc.properties {
			if !ours[member] {
				t.Errorf("the stub's %s has a member %q that %s has no field for", tc.name, member, tc.goType.Name())
			}
		}
	}
}

// TestArmedFaultReadsEveryParameterAsTheStubListsIt: each parameter a fault's record may carry
// (FaultStep's members but its mode) is a field of ArmedFault that can be nil, since the stub
// leaves out those the mode does not use; and each record the document shows reads as listed.
func TestArmedFaultReadsEveryParameterAsTheStubListsIt(t *testing.T) {
	schemas := readOpenAPI(t).Components.Schemas
	armedType := reflect.TypeOf(svcstub.ArmedFault{})
	fieldOf := map[string]string{"delayMs": "Delay", "retryAfter": "RetryAfter"} // durations, read by UnmarshalJSON
	unitOf := map[string]time.Duration{"delayMs": time.Millisecond, "retryAfter": time.Second}
	for i := 0; i < armedType.NumField(); i++ {
		field := armedType.Field(i)
		if name := strings.Split(field.Tag.Get("json"), ",")[0]; name != "-" {
			fieldOf[name] = field.Name
		}
	}
	var parameters []string
	for member := range schemas["FaultStep"].Properties {
		if member == "mode" {
			continue
		}
		parameters = append(parameters, member)
		field, ok := armedType.FieldByName(fieldOf[member])
		if !ok {
			t.Errorf("ArmedFault has no field for the parameter %q", member)
		} else if kind := field.Type.Kind(); kind != reflect.Pointer && kind != reflect.Interface {
			t.Errorf("ArmedFault.%s is a %s: a record without %q would read as a value", field.Name, field.Type, member)
		}
	}
	if len(parameters) == 0 {
		t.Fatal("the document's FaultStep has no parameters")
	}
	if t.Failed() {
		return // the records below cannot be read into fields that are missing or never nil
	}

	examples := schemas["ArmedFault"].Examples
	if len(examples) == 0 {
		t.Fatal("the document shows no ArmedFault")
	}
	for _, raw := range examples {
		var listed map[string]any
		var armed svcstub.ArmedFault
		if err := json.Unmarshal(raw, &listed); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &armed); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		read := reflect.ValueOf(armed)
		for _, member := range parameters {
			got := read.FieldByName(fieldOf[member])
			if want := listed[member]; want == nil {
				if !got.IsNil() {
					t.Errorf("%s: %s is %v, though the record has no %q", raw, fieldOf[member], got.Elem(), member)
				}
			} else if got.IsNil() {
				t.Errorf("%s: %s is nil, though the record has %q: %v", raw, fieldOf[member], member, want)
			} else if duration, isDuration := got.Elem().Interface().(time.Duration); isDuration {
				if number, _ := want.(float64); duration != time.Duration(number*float64(unitOf[member])) {
					t.Errorf("%s: %s is %s, want %v of %s", raw, fieldOf[member], duration, want, unitOf[member])
				}
			} else if number, isNumber := want.(float64); isNumber && got.Elem().Kind() == reflect.Int {
				if got.Elem().Int() != int64(number) {
					t.Errorf("%s: %s is %d, want %v", raw, fieldOf[member], got.Elem().Int(), number)
				}
			} else if !reflect.DeepEqual(got.Elem().Interface(), want) {
				t.Errorf("%s: %s is %v, want %v", raw, fieldOf[member], got.Elem(), want)
			}
		}
	}
}

func TestQueryParametersAreTheStubs(t *testing.T) {
	document := readOpenAPI(t)
	source := readSource(t, "client.go") + readSource(t, "stub.go")
	for path, names := range map[string][]string{
		"/_test/events":         {"minEvents", "minSvcEvents", "minTargets", "waitMs"},
		"/_test/requests":       {"route", "min", "waitMs", "bodies"},
		"/_test/checks/{check}": {"route", "flagKey", "targetingKey", "variant"},
		"/_test/coverage":       {"scope", "profile"},
	} {
		parameters := document.parametersOf(t, path, "get")
		for _, name := range names {
			if !strings.Contains(source, `"`+name+`"`) {
				t.Errorf("client.go and stub.go do not send %q (update this test's list)", name)
			}
			if !contains(parameters, name) {
				t.Errorf("%s is not a parameter of GET %s (it has %q)", name, path, parameters)
			}
		}
	}
}

func TestEveryControlPathIsTheStubs(t *testing.T) {
	document := readOpenAPI(t)
	source := readSource(t, "client.go")
	placeholder := regexp.MustCompile(`\{[^}]+\}`)
	served := map[string]bool{} // "METHOD /path/{x}"
	for path, operations := range document.Paths {
		for method := range operations {
			served[strings.ToUpper(method)+" "+placeholder.ReplaceAllString(path, "{x}")] = true
		}
	}

	type called struct{ method, path string }
	var calls []called
	for _, m := range regexp.MustCompile(`method:\s*"(\w+)",\s*path:\s*"([^"]*)"`).FindAllStringSubmatch(source, -1) {
		calls = append(calls, called{m[1], m[2]})
	}
	if all := strings.Count(source, `path: "`); all != len(calls) {
		t.Fatalf("client.go has %d path: literals, but %d with their method before them: update this test", all, len(calls))
	}
	for _, m := range regexp.MustCompile(`documentCall\("([^"]*)"`).FindAllStringSubmatch(source, -1) {
		calls = append(calls, called{"POST", m[1]})
	}
	if len(calls) < 20 {
		t.Fatalf("found only %d calls in client.go: %v", len(calls), calls)
	}
	for _, c := range calls {
		path := c.path
		if strings.HasSuffix(path, "/") { // "/_test/fault/" + strconv.Itoa(id)
			path += "{x}"
		}
		if !served[c.method+" "+path] {
			t.Errorf("client.go calls %s %s, which the stub's document does not have", c.method, c.path)
		}
	}
}

// vocabularyPath is the one name per idea that every language's helper spells in its own case.
const vocabularyPath = "../../../clients/vocabulary.json"

// TestTheVocabularyIsSpelledHere: each idea of the shared vocabulary has its Go spelling in
// this package, where that idea lives, and its control-plane name is the stub's.
func TestTheVocabularyIsSpelledHere(t *testing.T) {
	var vocabulary struct {
		Words map[string]struct{ Go, ControlPlane string }
	}
	if err := json.Unmarshal([]byte(readSource(t, vocabularyPath)), &vocabulary); err != nil || len(vocabulary.Words) == 0 {
		t.Fatalf("%s: %v", vocabularyPath, err)
	}
	home := map[string]reflect.Type{ // the type each idea is, or is a field or method of
		"perTestObject": reflect.TypeOf(svcstub.Stub{}),
		"routeSelector": reflect.TypeOf(svcstub.Fault{}),
		"bodyAsText":    reflect.TypeOf(svcstub.Request{}),
		"bodyAsJson":    reflect.TypeOf(svcstub.Request{}),
		"offlineUrl":    reflect.TypeOf(&svcstub.Stub{}),
	}
	document := readOpenAPI(t)
	for idea, word := range vocabulary.Words {
		in, known := home[idea]
		if !known {
			t.Errorf("%s has %q (Go: %s), which this test does not place: add it to home", vocabularyPath, idea, word.Go)
			continue
		}
		if !spells(in, word.Go) {
			t.Errorf("%s: %s is neither the type %s nor one of its fields or methods", idea, word.Go, in)
		}
		if path := word.ControlPlane; strings.HasPrefix(path, "/") {
			if document.Paths[path] == nil {
				t.Errorf("%s: %s is not a path of the stub's document", idea, path)
			}
		} else if path != "" && document.Components.Schemas["ArmingDocument"].Properties[path] == nil {
			t.Errorf("%s: %s is not a member of the stub's ArmingDocument", idea, path)
		}
	}
	if applyTo := vocabulary.Words["routeSelector"].ControlPlane; applyTo != "applyTo" {
		t.Errorf("the route selector's control-plane name is %q, not applyTo", applyTo)
	}
}

// spells: name is the type in, or a field or method of it.
func spells(in reflect.Type, name string) bool {
	if _, ok := in.MethodByName(name); ok {
		return true
	}
	if in.Kind() == reflect.Pointer {
		in = in.Elem()
	}
	_, isField := in.FieldByName(name)
	return in.Name() == name || isField
}

func TestHeadersAreInTheStubsDescription(t *testing.T) {
	description := readOpenAPI(t).Info.Description
	for _, header := range []string{
		svcstub.HeaderFault, svcstub.HeaderDelayMs, svcstub.HeaderStatus, svcstub.HeaderRetryAfter, svcstub.HeaderNamespace,
	} {
		if !strings.Contains(description, header) {
			t.Errorf("%s is not in the stub's description", header)
		}
	}
}

func TestOneVersionNumber(t *testing.T) {
	stub := readOpenAPI(t).Info.Version
	pyproject := regexp.MustCompile(`(?m)^version = "(.*)"$`).FindStringSubmatch(readSource(t, "../../../pyproject.toml"))
	if pyproject == nil {
		t.Fatal("pyproject.toml has no version line")
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal([]byte(readSource(t, "../../javascript/package.json")), &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	versions := map[string]string{
		"svcstub.Version":                 svcstub.Version,
		"pyproject.toml":                  pyproject[1],
		"clients/javascript/package.json": pkg.Version,
	}
	for name, version := range versions {
		if version != stub {
			t.Errorf("%s is %q; the stub's OpenAPI document is %q", name, version, stub)
		}
	}
}

func readSource(t *testing.T, path string) string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func contains(list []string, value string) bool {
	for _, item := range list {
		if item == value {
			return true
		}
	}
	return false
}
