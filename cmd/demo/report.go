package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

var tableHeader = []string{
	"side", "lock", "write", "attempted", "lost", "torn reads: readers", "torn reads: writers", "kept updates/s",
}

// sideDesign is how a side updates the file: its lock and how it writes, the
// columns that explain the others (what it loses, tears and keeps per
// second).
func sideDesign(mode string) (lock, write string) {
	switch mode {
	case modeControl:
		return "none", "in place, no fsync"
	case modeAtomic:
		return "none", "rename, fsync each"
	}
	return "flock", "rename, fsync per batch"
}

// printSetup says, before the table, what each side ran.
func printSetup(w io.Writer, cfg demoConfig) {
	total := cfg.procs * cfg.goroutines * cfg.updates
	wrap(w, fmt.Sprintf("Each side: %d processes × %d goroutines make %d read-modify-write updates each (%d in all) "+
		"of one status.json, which %d goroutines read meanwhile without a lock.",
		cfg.procs, cfg.goroutines, cfg.updates, total, cfg.readers))
	fmt.Fprintln(w)
}

// printTable writes the demo's results as a plain-text table: text columns
// left-aligned, numbers right-aligned, no colour. Below it, a key says what
// the columns count.
func printTable(w io.Writer, results []sideResult) {
	rows := [][]string{tableHeader}
	for _, r := range results {
		lost := strconv.FormatInt(r.lost(), 10)
		if r.finalCorrupt {
			lost = "all (corrupt)"
		}
		lock, write := sideDesign(r.mode)
		rows = append(rows, []string{
			sideName(r.mode),
			lock,
			write,
			strconv.FormatInt(r.attempted, 10),
			lost,
			fmt.Sprintf("%d of %d", r.readerTorn, r.reads),
			strconv.FormatInt(r.writerTorn, 10),
			strconv.FormatFloat(r.throughput(), 'f', 0, 64),
		})
	}
	width := make([]int, len(tableHeader))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], len([]rune(cell)))
		}
	}
	for n, row := range rows {
		cells := make([]string, len(row))
		for i, cell := range row {
			pad := strings.Repeat(" ", width[i]-len([]rune(cell)))
			if i < 3 || n == 0 {
				cells[i] = cell + pad
			} else {
				cells[i] = pad + cell
			}
		}
		fmt.Fprintln(w, strings.TrimRight(strings.Join(cells, " | "), " "))
		if n == 0 {
			seps := make([]string, len(width))
			for i, wd := range width {
				seps[i] = strings.Repeat("-", wd)
			}
			fmt.Fprintln(w, strings.Join(seps, "-+-"))
		}
	}
	fmt.Fprintln(w)
	wrap(w, "lost: attempted minus the final count. torn reads: reads that found an empty or partial file; "+
		"a writer that read one gave up its update. kept updates/s: updates that survived, per second of "+
		"wall time, so lost updates do not count; fsyncing the file and its directory costs time, and "+
		"status.Mutate pays it once per batch (the goroutines of a process waiting at the same time share one write).")
}

// printVerdict explains the table in words and returns errDemoFailed if the
// status.Mutate side lost anything, saw a torn read or failed. The control
// is reported, never judged: its races depend on timing.
func printVerdict(w io.Writer, results []sideResult, dir string, kept bool) error {
	fmt.Fprintln(w)
	var failure error
	for _, r := range results {
		switch r.mode {
		case modeControl, modeAtomic:
			describeControl(w, r)
		case modeMutate:
			failure = describeMutate(w, r)
		}
	}
	if kept {
		fmt.Fprintf(w, "Files kept in %s.\n", dir)
	}
	return failure
}

func describeControl(w io.Writer, r sideResult) {
	name := sideName(r.mode)
	var b strings.Builder
	switch {
	case r.finalCorrupt:
		fmt.Fprintf(&b, "%s: concurrent in-place writes left the file CORRUPT, so all %d updates are lost.", name, r.attempted)
	case r.lost() > 0:
		fmt.Fprintf(&b, "%s: lost %d of %d updates (%.1f%%)",
			name, r.lost(), r.attempted, 100*float64(r.lost())/float64(max(r.attempted, 1)))
		var why []string
		if n := r.lost() - r.writerTorn - r.errors; n > 0 {
			why = append(why, fmt.Sprintf("%d written over by a writer's stale copy", n))
		}
		if r.writerTorn > 0 {
			why = append(why, fmt.Sprintf("%d given up because the writer read a torn file", r.writerTorn))
		}
		if len(why) > 0 {
			b.WriteString(": " + strings.Join(why, ", "))
		}
		b.WriteString(".")
	default:
		fmt.Fprintf(&b, "%s: lost NOTHING this run. The race depends on timing; more contention (--procs, --goroutines, --updates) usually shows it. Not a failure.", name)
	}
	if r.errors > 0 {
		fmt.Fprintf(&b, " %d updates failed with an error (first: %s).", r.errors, r.firstError)
	}
	switch r.mode {
	case modeControl:
		b.WriteString(" Expected: without a lock, writers erase each other's updates, and in-place writes tear.")
	case modeAtomic:
		b.WriteString(" Expected: atomic writes stop torn reads, but without a lock stale copies still erase updates.")
	}
	wrap(w, b.String())
}

func describeMutate(w io.Writer, r sideResult) error {
	var problems []string
	if r.finalCorrupt {
		problems = append(problems, "the file does not decode at the end")
	} else if r.lost() != 0 {
		problems = append(problems, fmt.Sprintf("%d updates lost", r.lost()))
	}
	if r.torn() > 0 {
		problems = append(problems, fmt.Sprintf("%d torn reads", r.torn()))
	}
	if r.errors > 0 {
		problems = append(problems, fmt.Sprintf("%d updates failed (first: %s)", r.errors, r.firstError))
	}
	if len(problems) > 0 {
		wrap(w, fmt.Sprintf("status.Mutate: FAILED: %s.", strings.Join(problems, "; ")))
		return fmt.Errorf("%w: status.Mutate side: %s", errDemoFailed, strings.Join(problems, "; "))
	}
	wrap(w, fmt.Sprintf("status.Mutate: OK: lost 0 of %d updates, 0 torn reads in %d lock-free reads.", r.attempted, r.reads))
	return nil
}

// wrap writes text as lines of at most 100 columns, continuation lines
// indented, so that the verdict reads well in a terminal and in CI logs.
func wrap(w io.Writer, text string) {
	const width = 100
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			fmt.Fprintln(w, line)
			line = "  "
		} else if line != "" && line != "  " {
			line += " "
		}
		line += word
	}
	if line != "" {
		fmt.Fprintln(w, line)
	}
}
