// Command tokex measures what an OAuth 2.0 token exchange (RFC 8693) costs.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/tokex-dev/tokex/cmd/tokex/cli"
)

func main() {
	stop := profile(os.Getenv("TOKEX_CPUPROFILE"), os.Getenv("TOKEX_MEMPROFILE"))
	stopTrace := execTrace(os.Getenv("TOKEX_TRACE"))
	code := cli.Main(os.Args[1:], os.Stdout, os.Stderr)
	stopTrace()
	stop()
	os.Exit(code)
}

// profile writes pprof CPU and allocation profiles of the whole command
// when the variables name files (bench/README.md: how to read them).
func profile(cpuFile, memFile string) (stop func()) {
	var cpu *os.File
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "tokex: TOKEX_CPUPROFILE:", err)
		} else {
			cpu = f
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			_ = cpu.Close()
		}
		if memFile == "" {
			return
		}
		runtime.GC()
		f, err := os.Create(memFile)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "tokex: TOKEX_MEMPROFILE:", err)
		}
	}
}

// execTrace writes a runtime execution trace of the whole command when
// the variable names a file: where goroutines waited to run, GC pauses
// (bench/README.md: go tool trace -pprof=sched).
func execTrace(file string) (stop func()) {
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err == nil {
		err = trace.Start(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokex: TOKEX_TRACE:", err)
		return func() {}
	}
	return func() {
		trace.Stop()
		_ = f.Close()
	}
}
