// File and folder names of a Drakkar worker: recorder files, cache,
// watchdog, meta files, history folders, archives, merge results and the
// dot-prefixed work files.

package dbfiles

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Layouts of the timestamps inside file names (UTC).
const (
	// RecorderTimeLayout is %Y-%m-%d__%H_%M_%S, the timestamp of recorder
	// files and merge results.
	RecorderTimeLayout = "2006-01-02__15_04_05"
	// ArchiveTimeLayout is the timestamp of an archive's window bounds,
	// e.g. 2026-10-12_00-00.
	ArchiveTimeLayout = "2006-01-02_15-04"
)

// Fixed names and suffixes.
const (
	// ArchiveLockName is the archive lock of a cluster history folder.
	ArchiveLockName = ".archive.lock"
	// DBSuffix ends every recorder, cache and merged database name.
	DBSuffix = ".db"
	// MetaSuffix is appended to a sealed file's name to name its meta file.
	MetaSuffix = ".meta.json"
	// ArchiveSuffix ends every archive name.
	ArchiveSuffix = ".db.gz"
	// WALSuffix is appended to a database name to name its write-ahead log.
	WALSuffix = "-wal"
	// HistoryFolder and MergedFolder are the folders of shared.dir.
	HistoryFolder = "history"
	MergedFolder  = "merged"
)

// recorderSuffixLen is the length of "-YYYY-MM-DD__HH_MM_SS.db".
const recorderSuffixLen = 1 + len(RecorderTimeLayout) + len(DBSuffix)

// SanitizeCluster turns a configured cluster name into its folder name:
// every character outside [a-zA-Z0-9_-] becomes _, and "" becomes
// "default". Each character (code point) becomes one _, so "search hot"
// is "search_hot" and "é" is "_".
func SanitizeCluster(name string) string {
	if name == "" {
		return "default"
	}
	var b strings.Builder
	for _, r := range name {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// RecorderFileName is the name of the recorder file of worker started at
// t: <worker>-YYYY-MM-DD__HH_MM_SS.db, t in UTC, truncated to the second.
func RecorderFileName(worker string, t time.Time) string {
	return worker + "-" + t.UTC().Format(RecorderTimeLayout) + DBSuffix
}

// ParseRecorderFileName reports whether name (a base name) is a recorder
// file of exactly this worker, and its start time (UTC).
//
// The rule: name is worker, "-", a 20-character timestamp in
// RecorderTimeLayout that is a real UTC time, and ".db" — nothing more,
// nothing less. The timestamp has a fixed length, so the worker part of a
// name is always everything before its last 24 characters, and a name
// belongs to at most one worker name: worker "a" never matches
// "a-b-2026-10-13__08_00_00.db" (its middle is not a timestamp), and a
// worker named "a-2026-10-13__08_00_00" owns
// "a-2026-10-13__08_00_00-2026-10-14__00_00_00.db", which worker "a" does
// not match. An empty worker name matches nothing.
func ParseRecorderFileName(worker, name string) (time.Time, bool) {
	if worker == "" || len(name) != len(worker)+recorderSuffixLen {
		return time.Time{}, false
	}
	if !strings.HasPrefix(name, worker+"-") || !strings.HasSuffix(name, DBSuffix) {
		return time.Time{}, false
	}
	return parseExact(RecorderTimeLayout, name[len(worker)+1:len(name)-len(DBSuffix)])
}

// parseExact parses s in layout as UTC and accepts it only when it formats
// back to the same text (no other digits, no out-of-range fields).
func parseExact(layout, s string) (time.Time, bool) {
	t, err := time.Parse(layout, s)
	if err != nil || t.Format(layout) != s {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// CacheFileName is the LWW cache file of worker: <worker>-cache.db.
func CacheFileName(worker string) string { return worker + "-cache" + DBSuffix }

// WatchdogFileName is the watchdog file of worker: <worker>.watchdog.
func WatchdogFileName(worker string) string { return worker + ".watchdog" }

// MetaFileName is the meta file of the sealed file dbName (a base name
// ending in .db): <name>.db.meta.json.
func MetaFileName(dbName string) string { return dbName + MetaSuffix }

// WALFileName is the write-ahead log beside the database dbName.
func WALFileName(dbName string) string { return dbName + WALSuffix }

// HistoryDir is the history folder of a cluster (the configured name; it
// is sanitized here): <sharedDir>/history/<sanitized cluster>.
func HistoryDir(sharedDir, cluster string) string {
	return filepath.Join(sharedDir, HistoryFolder, SanitizeCluster(cluster))
}

// MergedDir is the folder of merge results: <sharedDir>/merged.
func MergedDir(sharedDir string) string { return filepath.Join(sharedDir, MergedFolder) }

// ArchiveName is the archive of cluster's window [from, to):
// <sanitized cluster>-<from>__<to>.db.gz with bounds in ArchiveTimeLayout
// (UTC, truncated to the minute), e.g.
// search-2026-10-12_00-00__2026-10-13_00-00.db.gz.
func ArchiveName(cluster string, from, to time.Time) string {
	return SanitizeCluster(cluster) + "-" + from.UTC().Format(ArchiveTimeLayout) + "__" +
		to.UTC().Format(ArchiveTimeLayout) + ArchiveSuffix
}

// archiveSuffixLen is the length of "-<from>__<to>.db.gz".
const archiveSuffixLen = 1 + 2*len(ArchiveTimeLayout) + 2 + len(ArchiveSuffix)

// ParseArchiveName is the inverse of ArchiveName: it reports whether name
// (a base name) is an archive, and its sanitized cluster and window
// bounds. The bounds have a fixed length, so the cluster is everything
// before the last 41 characters; it must be non-empty and already
// sanitized, and from must be before to.
func ParseArchiveName(name string) (cluster string, from, to time.Time, ok bool) {
	if len(name) <= archiveSuffixLen || !strings.HasSuffix(name, ArchiveSuffix) {
		return "", time.Time{}, time.Time{}, false
	}
	cluster = name[:len(name)-archiveSuffixLen]
	rest := name[len(cluster) : len(name)-len(ArchiveSuffix)]
	n := len(ArchiveTimeLayout)
	if rest[0] != '-' || rest[1+n:1+n+2] != "__" || SanitizeCluster(cluster) != cluster {
		return "", time.Time{}, time.Time{}, false
	}
	from, okFrom := parseExact(ArchiveTimeLayout, rest[1:1+n])
	to, okTo := parseExact(ArchiveTimeLayout, rest[1+n+2:])
	if !okFrom || !okTo || !from.Before(to) {
		return "", time.Time{}, time.Time{}, false
	}
	return cluster, from, to, true
}

// NameMax is the longest file name, in bytes, a folder of a worker may
// hold (NAME_MAX of Linux and macOS file systems).
const NameMax = 255

// ArchiveWorkName is the dot-prefixed work file an archive is compressed
// into before it is published: .<archive>.<16 hex>.tmp. It is the longest
// name the archive grammar produces.
func ArchiveWorkName(archive, hex16 string) string { return "." + archive + "." + hex16 + ".tmp" }

// archiveWorkExtra is what ArchiveWorkName adds to an archive name.
const archiveWorkExtra = len("..") + 16 + len(".tmp")

// MaxClusterFolderBytes is the longest sanitized cluster name (history
// folder name) whose archives can be written: the archive's work file,
// .<cluster>-<from>__<to>.db.gz.<16 hex>.tmp, must fit in NameMax bytes
// (192 = 255 - 41 - 22).
const MaxClusterFolderBytes = NameMax - archiveSuffixLen - archiveWorkExtra

// ClusterNameProblem says why a configured cluster name cannot be used, or
// returns nil: its sanitized form (SanitizeCluster: one byte per code
// point) must be at most MaxClusterFolderBytes long, or no archive of the
// cluster could ever be written.
func ClusterNameProblem(name string) error {
	if n := len(SanitizeCluster(name)); n > MaxClusterFolderBytes {
		return fmt.Errorf("its folder name is %d bytes, at most %d (archive file names must fit in %d bytes)",
			n, MaxClusterFolderBytes, NameMax)
	}
	return nil
}

// MergedName is the name of a merge result started at t:
// merged-YYYY-MM-DD__HH_MM_SS-<16 hex>.db (UTC).
func MergedName(t time.Time, hex16 string) string {
	return "merged-" + t.UTC().Format(RecorderTimeLayout) + "-" + hex16 + DBSuffix
}

// IncomingName is the dot-prefixed work file of a cross-filesystem copy of
// dbName into a history folder: .<name>.<16 hex>.incoming.
func IncomingName(dbName, hex16 string) string {
	return "." + dbName + "." + hex16 + ".incoming"
}

// NewHex16 returns 16 random lowercase hex characters (8 bytes from
// crypto/rand), for instance ids, lock tokens and work-file names.
func NewHex16() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// IsHex16 reports whether s is exactly 16 lowercase hex characters.
func IsHex16(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ParseSealedName reports whether name (a base name) is a recorder file
// of some worker, whatever its name: a non-empty worker part, "-", a real
// UTC timestamp in RecorderTimeLayout, and ".db", as RecorderFileName
// writes it (the worker part is everything before the last 24
// characters); with the worker part and the start time. A worker part that
// starts with a dot, or holds a slash, a backslash or a control character,
// is no worker name.
func ParseSealedName(name string) (worker string, start time.Time, ok bool) {
	if len(name) <= recorderSuffixLen {
		return "", time.Time{}, false
	}
	worker = name[:len(name)-recorderSuffixLen]
	if strings.HasPrefix(worker, ".") || strings.ContainsFunc(worker, func(r rune) bool {
		return r == '/' || r == '\\' || r < 0x20 || r == 0x7f
	}) {
		return "", time.Time{}, false
	}
	start, ok = ParseRecorderFileName(worker, name)
	if !ok {
		return "", time.Time{}, false
	}
	return worker, start, true
}

// mergedNameLen is the length of every MergedName.
const mergedNameLen = len("merged-") + len(RecorderTimeLayout) + 1 + 16 + len(DBSuffix)

// ParseMergedName is the inverse of MergedName: it reports whether name
// (a base name) is a merge result, with its start time and hex id.
func ParseMergedName(name string) (start time.Time, hex16 string, ok bool) {
	if len(name) != mergedNameLen || !strings.HasPrefix(name, "merged-") || !strings.HasSuffix(name, DBSuffix) {
		return time.Time{}, "", false
	}
	rest := name[len("merged-") : len(name)-len(DBSuffix)]
	n := len(RecorderTimeLayout)
	start, okT := parseExact(RecorderTimeLayout, rest[:n])
	hex16 = rest[n+1:]
	if !okT || rest[n] != '-' || !IsHex16(hex16) {
		return time.Time{}, "", false
	}
	return start, hex16, true
}
