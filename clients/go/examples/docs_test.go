package examples_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Go guide (docs/guides/go.md) shows the examples the module's tests run: each example
// file here is one of its blocks, verbatim, and its install lines name this module.
func TestTheGuideShowsTheExamplesAsTheyRun(t *testing.T) {
	guide, err := os.ReadFile("../../../docs/guides/go.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]bool{}
	for _, block := range regexp.MustCompile("(?ms)^```go\n(.*?)^```$").FindAllStringSubmatch(string(guide), -1) {
		blocks[block[1]] = true
	}
	for block := range blocks { // the SDK's and the provider's tests among them: they build only in their own modules
		if _, err := parser.ParseFile(token.NewFileSet(), "block.go", block, 0); err != nil {
			t.Errorf("a block of the guide is not Go: %v", err)
		}
	}
	files, _ := filepath.Glob("*/*.go")
	if len(files) < 4 {
		t.Fatalf("examples: %v", files)
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !blocks[string(text)] {
			t.Errorf("%s is not shown in the guide as it is", file)
		}
	}
	module, _ := os.ReadFile("../go.mod")
	path := strings.Fields(strings.SplitN(string(module), "\n", 2)[0])[1]
	for _, line := range []string{"-require=" + path + "@v0.1.0", "-replace=" + path + "=/path/to/svc-stub/clients/go"} {
		if !strings.Contains(string(guide), line) {
			t.Errorf("the install lines lack %s", line)
		}
	}
}
