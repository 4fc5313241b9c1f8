// Command tokex measures what an OAuth 2.0 token exchange (RFC 8693) costs.
package main

import "github.com/tokex-dev/tokex/cmd/tokex/cli"

func main() { cli.Run() }
