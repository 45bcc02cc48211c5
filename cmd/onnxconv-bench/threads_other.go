//go:build !linux

package main

import "time"

// threadTimes is unknown off Linux.
func threadTimes() map[int]time.Duration { return nil }

// gettid is unknown off Linux.
func gettid() int { return 0 }
