package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/tokex-dev/tokex/internal/gosrc"
)

// moduleRoot is the checkout's root folder.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := gosrc.Root("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestReadmeCommandTable (issue 27 item 4): every command `tokex --help`
// lists has its line in the README's table of commands, and the table
// names no command tokex does not have.
func TestReadmeCommandTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Commands\n")
	if !ok {
		t.Fatal("README.md has no ## Commands section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	inTable := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `tokex ([a-z0-9-]+)`").FindAllStringSubmatch(section, -1) {
		inTable[m[1]] = true
	}
	code, out, errs := run(t, "--help")
	if code != 0 {
		t.Fatalf("tokex --help: exit %d %s", code, errs)
	}
	_, list, ok := strings.Cut(out, "Available Commands:\n")
	if !ok {
		t.Fatalf("tokex --help lists no command:\n%s", out)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	helped := map[string]bool{}
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			helped[f[0]] = true
			if !inTable[f[0]] {
				t.Errorf("tokex %s is in tokex --help but not in README.md's table of commands", f[0])
			}
		}
	}
	if len(helped) < 10 {
		t.Fatalf("only %d commands in tokex --help:\n%s", len(helped), out)
	}
	for name := range inTable {
		if !helped[name] {
			t.Errorf("README.md's table of commands names tokex %s, which tokex --help does not list", name)
		}
	}
}

// TestDocLinks (issue 27 item 4): every relative link of README.md,
// SECURITY.md and docs/ points at a file or folder of the repository, and
// an anchor at a heading of that page; the README is a front page of at
// most 250 lines without commit ids.
func TestDocLinks(t *testing.T) {
	root := moduleRoot(t)
	pages := []string{filepath.Join(root, "README.md"), filepath.Join(root, "SECURITY.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, l := range markdownLinks(string(b)) {
			links++
			if why := brokenLink(page, l); why != "" {
				t.Errorf("%s: link %q %s", rel, l, why)
			}
		}
	}
	if links < 50 {
		t.Errorf("only %d links checked", links)
	}
	readme, _ := os.ReadFile(filepath.Join(root, "README.md"))
	if n := strings.Count(string(readme), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; a front page has at most 250 (the reference goes to docs/)", n)
	}
	for _, id := range commitID.FindAllString(string(readme), -1) {
		if strings.ContainsAny(id, "abcdef") && strings.ContainsAny(id, "0123456789") {
			t.Errorf("README.md names a commit id, %s: dated measurements go to docs/", id)
		}
	}
}

var (
	linkRe   = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	fenceRe  = regexp.MustCompile("(?s)(^|\n)```.*?\n```")
	codeRe   = regexp.MustCompile("`[^`\n]*`")
	commitID = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
)

// markdownLinks are a page's link targets outside code.
func markdownLinks(md string) []string {
	md = codeRe.ReplaceAllString(fenceRe.ReplaceAllString(md, "\n"), "")
	var out []string
	for _, m := range linkRe.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// brokenLink says why a link of page points nowhere ("" when it does not):
// other sites are not followed, a relative path must exist, and an anchor
// must be a heading of its page.
func brokenLink(page, link string) string {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return ""
	}
	path, anchor, _ := strings.Cut(link, "#")
	target := page
	if path != "" {
		target = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
		if _, err := os.Stat(target); err != nil {
			return "points at nothing: " + err.Error()
		}
	}
	if anchor == "" || !strings.HasSuffix(target, ".md") {
		return ""
	}
	b, err := os.ReadFile(target)
	if err != nil {
		return err.Error()
	}
	if !headingAnchors(string(b))[anchor] {
		return fmt.Sprintf("names #%s, no heading of %s", anchor, filepath.Base(target))
	}
	return ""
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, spaces as hyphens, punctuation dropped, a repeated one numbered.
func headingAnchors(md string) map[string]bool {
	md = fenceRe.ReplaceAllString(md, "\n")
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(md, "\n") {
		text, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		text = strings.TrimLeft(text, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
