// Command tokex measures what an OAuth 2.0 token exchange (RFC 8693) costs.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/tokex-dev/tokex/cmd/tokex/cli"
)

func main() {
	stop := profile(os.Getenv("TOKEX_CPUPROFILE"), os.Getenv("TOKEX_MEMPROFILE"))
	code := cli.Main(os.Args[1:], os.Stdout, os.Stderr)
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
