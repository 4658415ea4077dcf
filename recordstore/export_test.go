package recordstore

// SetKeySetMemory lowers the memory s holds keys in before it moves them
// to its file, so that specs reach the file with few rows.
func SetKeySetMemory(s *KeySet, n int) { s.memory = n }
