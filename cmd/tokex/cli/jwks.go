package cli

import (
	"crypto/tls"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/internal/statedir"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/subject"
)

func newJWKSCmd() *cobra.Command {
	var keyFile, alg, serve, certFile, keyPEM string
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
			if serve == "" {
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
				return nil
			}
			return serveJWKS(cmd, serve, b, certFile, keyPEM)
		},
	}
	cmd.Flags().StringVar(&serve, "serve", "", "serve the JWKS over HTTPS on HOST:PORT, like the article's perf-jwks-server")
	cmd.Flags().StringVar(&certFile, "tls-cert", "", "certificate for --serve (default: a generated self-signed one)")
	cmd.Flags().StringVar(&keyPEM, "tls-key", "", "private key for --tls-cert")
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

// serveJWKS hosts the key set until SIGINT/SIGTERM.
func serveJWKS(cmd *cobra.Command, addr string, jwks []byte, certFile, keyFile string) error {
	var pair tls.Certificate
	var err error
	if certFile != "" {
		pair, err = tlscert.LoadPair(certFile, keyFile)
	} else {
		var p *tlscert.Pair
		if p, err = tlscert.Loopback(); err == nil {
			pair = p.Cert
		}
	}
	if err != nil {
		return &exitError{code: ExitCannotRun, err: err}
	}
	s, err := subject.ServeJWKS(addr, jwks, &pair)
	if err != nil {
		return &exitError{code: ExitCannotRun, err: err}
	}
	defer s.Close()
	fmt.Fprintf(cmd.OutOrStdout(), "serving the subject-token JWKS at %s\n", s.URL)
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
