// Package confload decodes tokex's YAML files strictly and reports every
// problem as file:line: field: message, so a wrong config points at itself.
package confload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a configuration problem located in a file.
type Error struct {
	File  string
	Line  int    // 0 when the field is not written in the file
	Field string // dotted path, e.g. stages[1] or subject.issuer
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Doc is a parsed YAML document that remembers where each field was written.
type Doc struct {
	File  string
	data  []byte
	root  *yaml.Node
	lines map[int]string // line -> deepest field path written on it
	paths map[string]int // field path -> line
}

// MaxFileBytes caps a config file: none comes near it, and a bigger one
// (or /dev/zero) must not exhaust memory.
const MaxFileBytes = 1 << 20

// ReadFile parses a YAML file of at most MaxFileBytes.
func ReadFile(path string) (*Doc, error) {
	data, err := ReadLimited(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// ReadLimited reads a file a config names (a key, a certificate, a CA, a
// JWKS) of at most limit bytes: a bigger one, or /dev/zero, must not
// exhaust memory.
func ReadLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %s", path, size(limit))
	}
	return data, nil
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Parse parses YAML data; file names it in errors.
func Parse(file string, data []byte) (*Doc, error) {
	d := &Doc{File: file, data: data, lines: map[int]string{}, paths: map[string]int{}}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, d.wrap(err)
	}
	d.root = &root
	if len(root.Content) > 0 {
		d.index(root.Content[0], "")
		if err := d.finite(root.Content[0], ""); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// finite refuses the YAML floats that are not numbers (.nan, .inf, -.Inf,
// …): no tokex setting means anything with them, and every range check
// of a NaN passes.
func (d *Doc) finite(n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			if err := d.finite(n.Content[i+1], p); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := d.finite(c, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		var f float64
		if n.ShortTag() == "!!float" && n.Decode(&f) == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return &Error{File: d.File, Line: n.Line, Field: path, Msg: fmt.Sprintf("%s is not a finite number", n.Value)}
		}
	}
	return nil
}

func (d *Doc) index(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			d.lines[k.Line] = p
			d.paths[p] = k.Line
			d.index(v, p)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if _, taken := d.lines[c.Line]; !taken || c.Kind == yaml.ScalarNode {
				d.lines[c.Line] = p
			}
			d.paths[p] = c.Line
			d.index(c, p)
		}
	}
}

// Decode fills out strictly: unknown fields and wrong types are errors that
// name the field and line.
func (d *Doc) Decode(out any) error {
	if d.root == nil || len(d.root.Content) == 0 {
		return nil
	}
	// yaml.Node.Decode has no strict mode, so decode the original bytes again.
	dec := yaml.NewDecoder(bytes.NewReader(d.data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil && !errors.Is(err, io.EOF) {
		return d.wrap(err)
	}
	return nil
}

var lineRE = regexp.MustCompile(`line (\d+): (.*)`)

// wrap turns a yaml.v3 error into one Error per problem, joined.
func (d *Doc) wrap(err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	var errs []error
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		e := &Error{File: d.File, Msg: m}
		if sm := lineRE.FindStringSubmatch(m); sm != nil {
			e.Line, _ = strconv.Atoi(sm[1])
			e.Msg = sm[2]
			e.Field = d.lines[e.Line]
			if f := strings.TrimPrefix(e.Msg, "field "); f != e.Msg {
				name, _, _ := strings.Cut(f, " ")
				e.Msg = "unknown field " + strconv.Quote(name)
			}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Errorf reports a validation problem with the field at path.
func (d *Doc) Errorf(path, format string, args ...any) error {
	e := &Error{File: "(flags/defaults)", Field: path, Msg: fmt.Sprintf(format, args...)}
	if d != nil {
		e.File = d.File
		e.Line = d.paths[path]
	}
	return e
}
