// Package archive is the archive pass of the Drakkar layer (the spec's
// "Archiving" sections): it folds each due UTC window's sealed recorder
// files of one cluster's history folder into one gzip-compressed merged
// database, <cluster>-<from>__<to>.db.gz, and deletes only the sealed
// files that archive covers.
//
// One pass (Pass), in order:
//
//  1. refresh drakkar_recorder_archive_bytes/_files from the folder's
//     archives (before the lock is tried);
//  2. take history/<cluster>/.archive.lock by exclusive create (0600,
//     canonical body {acquired_at, instance, token, worker}), or take over
//     a lock older than lock_stale_seconds (rename aside to
//     .archive.lock.stale.<token>, put back with a hard link when it was
//     fresh); otherwise skip the tick. The holder touches the lock every
//     60 s (Options.RefreshEvery);
//  3. sweep leftovers older than lock_stale_seconds (work files and their
//     sidecars, .*.incoming, .clock.*, .archive.lock.stale.*, meta files
//     whose database is gone);
//  4. for each due window, oldest first: gunzip an archive already at the
//     final name (fold), merge it and the window's sealed files not yet
//     covered (drakkar/merge) into .<token>.merge.db, gzip into
//     .<archive>.<token>.tmp, read the lock, publish (rename over a folded
//     archive, hard link otherwise: never over an archive that appeared
//     meanwhile), fsync the folder, then delete the merged and covered
//     sources with their meta files, reading the lock before each;
//     unreadable sources are renamed <name>.unreadable;
//  5. expire archives (retention_days) and merge results
//     (merged_retention_days);
//  6. delete the lock while it still holds our token.
//
// Ages are measured on the file server's clock (FileServerClock: the
// modification time of a touched .clock.<instance> marker), never a
// host's wall clock. A pass whose token is gone from the lock (fenced)
// publishes nothing and deletes nothing from then on.
//
// What survives a crash: sources are deleted only after the archive that
// covers them is durable at its final name, so a crash at any point loses
// no event; a crash after publishing leaves sources the next pass finds
// covered by the archive's workers.source_file rows and deletes without
// merging them again. Work files are named with the token and swept by a
// later pass once older than lock_stale_seconds; the lock itself is taken
// over once stale.
//
// Pass may run in many processes and hosts at once on one folder; the
// lock lets one work. In one process, run one pass at a time per folder.
package archive
