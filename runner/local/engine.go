package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EngineName is the reference engine's binary (cmd/tokex-engine).
const EngineName = "tokex-engine"

// EngineEnv names the engine's path for the command line, after --engine
// and before target.embedded.engine.
const EngineEnv = "TOKEX_ENGINE"

// EngineArg puts tokex itself in engine mode (its hidden command).
const EngineArg = "engine"

// Engine is the program the local driver starts as the embedded server.
type Engine struct {
	Path string
	Args []string // before the engine's flags
	// Inflated: the engine is tokex itself, so its memory includes the
	// pages of tokex's own binary (client-go and the rest).
	Inflated bool
	How      string // how it was found, for the log
}

// InflatedDetail is the engine_memory_inflated warning's text.
const InflatedDetail = "engine memory includes tokex's own binary pages (the engine ran as `tokex engine`, no tokex-engine was found): " +
	"install both with `go install ./cmd/...`, or pass --engine PATH (target.embedded.engine), for the server's own figure"

// EngineSearch is where FindEngine looks; zero fields take the running
// process's own values.
type EngineSearch struct {
	Explicit string   // --engine, $TOKEX_ENGINE or target.embedded.engine
	Self     string   // the running tokex (os.Executable)
	SelfArgs []string // how Self runs as the engine; nil: it cannot
}

// FindEngine resolves the engine: (a) the explicit path; (b) tokex-engine
// beside the running tokex (`go install ./cmd/...` installs both); (c)
// tokex itself in engine mode, Inflated.
func FindEngine(s EngineSearch) (Engine, error) {
	if s.Explicit != "" {
		if err := executable(s.Explicit); err != nil {
			return Engine{}, fmt.Errorf("engine %s: %w", s.Explicit, err)
		}
		return Engine{Path: s.Explicit, How: "given"}, nil
	}
	if s.Self == "" {
		s.Self, _ = os.Executable()
	}
	beside := filepath.Join(filepath.Dir(s.Self), EngineName)
	if s.Self != "" && executable(beside) == nil {
		return Engine{Path: beside, How: "beside tokex"}, nil
	}
	if s.SelfArgs == nil || s.Self == "" {
		return Engine{}, fmt.Errorf("find engine: no %s beside %s, and no --engine", EngineName, s.Self)
	}
	return Engine{Path: s.Self, Args: s.SelfArgs, Inflated: true, How: "tokex itself: no " + EngineName + " beside it"}, nil
}

// executable reports whether path is a regular file someone may execute.
func executable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}
