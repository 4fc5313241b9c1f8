package cli

import "runtime"

func goVersion() string { return runtime.Version() }
