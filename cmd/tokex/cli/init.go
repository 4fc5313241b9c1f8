package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/runner/config"
)

func newInitCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init [FILE]",
		Short: "Write a commented campaign.yaml that reproduces the article's campaign",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "campaign.yaml"
			if len(args) == 1 {
				path = args[0]
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(path, flags, 0o644)
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s exists (use --force to overwrite)", path)
			}
			if err != nil {
				return err
			}
			if _, err := f.WriteString(config.Template); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s; run it with: tokex run --config %s\n", path, path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing file")
	return cmd
}
