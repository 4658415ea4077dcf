package spool

// ErrorFile is the name of the failure record inside a failed batch folder.
const ErrorFile = "error.json"
