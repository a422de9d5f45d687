package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// printProxies prints the streams as a table with the NACKs' messages
// under it, or as one JSON or YAML list.
func printProxies(w io.Writer, format string, proxies []proxyView) error {
	if format != "table" {
		if proxies == nil {
			proxies = []proxyView{}
		}
		data, err := json.Marshal(proxies)
		if err != nil {
			return err
		}
		return printJSON(w, format, data)
	}
	if len(proxies) == 0 {
		_, err := fmt.Fprintln(w, "no xDS client is connected (or the xds replicas do not publish their streams yet)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "NODE\tGATEWAY\tREPLICA\tCONNECTED")
	for _, t := range xdsTypes {
		fmt.Fprintf(tw, "\t%s", t.short)
	}
	fmt.Fprintln(tw)
	for _, p := range proxies {
		node := p.NodeID
		if p.Proxyless {
			node += " (proxyless)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s", node, p.Gateway, p.Replica, p.Connected)
		for _, t := range p.Types {
			cell := t.State
			if t.State == stateStale && t.Acked != "" {
				cell += " (" + shortVersion(t.Acked) + ")"
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range proxies {
		for _, t := range p.Types {
			if t.State == stateNacked {
				fmt.Fprintf(w, "%s %s rejected version %s: %s\n", p.NodeID, t.Type, shortVersion(t.Nacked), t.NackInfo)
			}
		}
	}
	return nil
}
