// Package bytesize formats byte counts for people. It imports nothing of
// the module, so that the lowest packages (fsys, canonical) can name sizes
// in their errors.
package bytesize

import "fmt"

// Format formats a byte count for people: "512 B", "1.5 KiB", "4.0 EiB".
func Format(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
