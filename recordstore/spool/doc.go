// Package spool is the on-disk hand-off of rows from any process to the
// owner of a store: rename-committed batch folders holding a manifest
// (format 1) and data files in a registered codec.
package spool
