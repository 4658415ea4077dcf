package spool_test

const childEnv = "SPOOL_TEST_CHILD"

func runChild() int { return 2 }
