package cli

import (
	"bufio"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

// newMintCmd prints pre-signed subject tokens for external load tools
// (bench/server-load.sh feeds them to wrk). Hidden: tokens are credentials.
func newMintCmd() *cobra.Command {
	var keyFile, alg, aud, issuer string
	var n, users int
	var lifetime time.Duration
	cmd := &cobra.Command{
		Use:    "mint",
		Short:  "Print N fresh subject tokens, one per line (for benchmarks)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keyFile == "" && alg == "" {
				alg = jose.RS256
			}
			keys, err := subject.Keys(keyFile, alg, "")
			if err != nil {
				return err
			}
			m := &subject.Minter{Key: keys[0], Issuer: issuer, Lifetime: lifetime, Users: subject.Users(users),
				Prefix: fmt.Sprintf("mint-%d-", time.Now().UnixNano())}
			w := bufio.NewWriter(cmd.OutOrStdout())
			for i := 0; i < n; i++ {
				t, err := m.Mint(aud)
				if err != nil {
					return err
				}
				fmt.Fprintln(w, t)
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&keyFile, "subject-key", "", "signing key (PEM); default: tokex's stored key")
	f.StringVar(&alg, "subject-alg", "", "algorithm of the stored key to sign with (default RS256)")
	f.StringVar(&aud, "aud", "perf-agent-0", "audience (the client id that will present them)")
	f.StringVar(&issuer, "issuer", "https://pf-perf-subject", "iss claim")
	f.IntVar(&n, "count", 1, "how many tokens")
	f.IntVar(&users, "users", 100, "user pool size")
	f.DurationVar(&lifetime, "lifetime", 30*time.Minute, "token lifetime")
	return cmd
}
