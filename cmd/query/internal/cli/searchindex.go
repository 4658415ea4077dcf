// query kind search-index: building the search index of a kind, so that q
// searches read it instead of every row.

package cli

import (
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/spf13/cobra"
)

func (a *app) kindSearchIndexCmd() *cobra.Command {
	var cols []string
	cmd := &cobra.Command{
		Use:   "search-index KIND [--column COL]...",
		Short: "Build the search index of a kind's search columns (as the owner)",
		Long: `Build (or rebuild) the search index of KIND over --column (repeatable;
default: every string column), so that q searches of 3 bytes or more read
the index instead of every row. The rows a search finds are the same with
or without it. Only the store's owner writes the index: with another
process owning the store this fails with read_only and changes nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return a.quietly(cmd.Context(), func(st *records.Store) error {
				rd := recordresults.NewReader(st.Backend())
				if len(cols) > 0 {
					if err := rd.SetSearchColumns(cmd.Context(), args[0], cols...); err != nil {
						return err
					}
				}
				return rd.CreateSearchIndex(cmd.Context(), args[0])
			})
		}),
	}
	cmd.Flags().StringArrayVar(&cols, "column", nil, "a search column to index (repeatable; default: every string column)")
	return cmd
}
