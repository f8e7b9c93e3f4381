// Command gomodule checks the Go helper as the Go module proxy would take it and writes what
// the proxy serves for one version of it: the module zip, its go.mod and its .info.
//
//	gomodule check -dir clients/go -repo github.com/svc-stub/svc-stub -subdir clients/go
//	gomodule build -dir clients/go -repo ... -subdir ... -version v0.1.0 -time RFC3339 -out DIR
//
// Either way it refuses, in one line on stderr and exit 1, a go.mod whose module path is not
// the repository's path and the module's folder in it (where `go get` looks for it, by the tag
// <subdir>/<version>), a version that path cannot carry, and any file the module zip would
// refuse (golang.org/x/mod/zip's CheckDir).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "check" && os.Args[1] != "build" {
		fmt.Fprintln(os.Stderr, "usage: gomodule check|build -dir DIR -repo REPO -subdir SUBDIR [-version vX.Y.Z -time RFC3339 -out DIR]")
		os.Exit(2)
	}
	flags := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := flags.String("dir", "", "the module's folder (holding its go.mod)")
	repo := flags.String("repo", "", "the repository's module path, e.g. github.com/svc-stub/svc-stub")
	subdir := flags.String("subdir", "", "the module's folder in the repository, e.g. clients/go")
	version := flags.String("version", "", "the version to build, vX.Y.Z")
	stamp := flags.String("time", "", "the version's time (RFC 3339), for its .info")
	out := flags.String("out", "", "where to write <version>.zip, .mod and .info")
	_ = flags.Parse(os.Args[2:])
	said, err := checked(*dir, *repo, *subdir)
	if err == nil && os.Args[1] == "build" {
		said, err = built(*dir, said, *version, *stamp, *out)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "go module %s: %v\n", *dir, err)
		os.Exit(1)
	}
	fmt.Println(said)
}

// checked is the module path of the module in dir, when it is where its repository says and
// every file of it would go into its zip.
func checked(dir, repo, subdir string) (string, error) {
	file := filepath.Join(dir, "go.mod")
	text, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	parsed, err := modfile.Parse(file, text, nil)
	if err != nil {
		return "", err
	}
	if parsed.Module == nil {
		return "", errors.New("go.mod has no module line")
	}
	want := path.Join(repo, subdir)
	if got := parsed.Module.Mod.Path; got != want {
		return "", fmt.Errorf("go.mod says module %s, not %s: go get finds it by its repository %s and its folder %s there", got, want, repo, subdir)
	}
	if err := module.CheckPath(want); err != nil {
		return "", err
	}
	files, err := zip.CheckDir(dir)
	if err != nil {
		return "", fmt.Errorf("the module zip would refuse it: %s", oneLine(err, files))
	}
	return want, nil
}

// oneLine names what CheckDir refused, each file with its reason.
func oneLine(err error, files zip.CheckedFiles) string {
	var refused []string
	for _, invalid := range files.Invalid {
		refused = append(refused, fmt.Sprintf("%s (%v)", invalid.Path, invalid.Err))
	}
	if files.SizeError != nil {
		refused = append(refused, files.SizeError.Error())
	}
	if len(refused) == 0 {
		return strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return strings.Join(refused, "; ")
}

// built writes <version>.zip, .mod and .info into out: what the proxy serves for it.
func built(dir, modulePath, version, stamp, out string) (string, error) {
	at := module.Version{Path: modulePath, Version: version}
	if err := module.Check(at.Path, at.Version); err != nil {
		return "", err
	}
	if module.CanonicalVersion(version) != version {
		return "", fmt.Errorf("%s is not a canonical version (vX.Y.Z)", version)
	}
	when, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return "", fmt.Errorf("-time: %v", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	archive, err := os.Create(filepath.Join(out, version+".zip"))
	if err != nil {
		return "", err
	}
	err = zip.CreateFromDir(archive, at, dir)
	if closed := archive.Close(); err == nil {
		err = closed
	}
	if err != nil {
		return "", err
	}
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(out, version+".mod"), goMod, 0o644); err != nil {
		return "", err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when.UTC()})
	if err := os.WriteFile(filepath.Join(out, version+".info"), info, 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s@%s", modulePath, version), nil
}
