package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/runner/statedir"
	"github.com/tokex-dev/tokex/runner/subject"
)

func newJWKSCmd() *cobra.Command {
	var keyFile, alg string
	cmd := &cobra.Command{
		Use:   "jwks",
		Short: "Print the public JWKS of the subject-token signing key",
		Long: `Print the public JWK Set matching the key tokex signs subject tokens with, to
configure an authorization server with it or host it like the article's
perf-jwks-server. Without --subject-key, tokex's default key is used (created
once and reused, so a server that trusts it keeps working).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := loadSubjectKey(keyFile, alg)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			b, err := subject.JWKS(k)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return nil
		},
	}
	cmd.Flags().StringVar(&keyFile, "subject-key", "", "subject-token signing key (PEM)")
	cmd.Flags().StringVar(&alg, "subject-alg", subject.RS256, "algorithm of a newly created default key")
	return cmd
}

// loadSubjectKey reads keyFile, or the default key in tokex's state folder.
func loadSubjectKey(keyFile, alg string) (*subject.Key, error) {
	if keyFile != "" {
		return subject.LoadPEM(keyFile)
	}
	path, err := statedir.SubjectKeyPath()
	if err != nil {
		return nil, err
	}
	return subject.LoadOrCreate(path, alg)
}
