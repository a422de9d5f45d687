// Package file is the file mode of the provider: it publishes the Kubernetes
// objects of a folder of manifests to the resources bucket, and keeps the
// bucket equal to the folder as files are added, edited, renamed and removed.
//
// # What is read
//
// Every file ending in .yaml, .yml or .json under the folder and its
// subfolders, except names starting with "." (editor swap files; the hidden
// "..data" folder of a Kubernetes ConfigMap volume, whose files are read
// through the links beside it). Each file is decoded by package manifest:
// multi-document YAML of the kinds manifest.Kinds lists, strictly checked,
// and checked as the Kubernetes API server would check it on create (package
// validate, whose schemas Run compiles in the background from the start).
//
// # What is published
//
// One busv1.Resource per object under bus.ResourceKey(kind, namespace, name),
// with origin "file:<path>:<line>" (the path as the folder was given, joined
// with the file's place in it; the line where the object's document starts).
// Objects are normalized as manifest.Decode describes: files carry no uid, so
// the uid is derived from kind, namespace and name, and creationTimestamp is
// the Unix epoch unless the file sets it. generation starts at 1 and goes up
// by one each time the object outside metadata changes (the way Kubernetes
// counts for custom resources); resourceVersion is a hash of the object and
// its generation. Both are read back from the bucket on start, so an
// unchanged folder rewrites nothing and generations survive restarts.
//
// Only objects that changed are written; objects that disappear from a file,
// or whose file is removed, are deleted. When two documents define the same
// object, the first by path (byte-wise order of the full path; then document
// order) wins, and the other is logged and listed by Problems, naming both.
//
// # Problems
//
// A file that cannot be read or decoded keeps its last good content on the
// bus (nothing if it never had any), and nothing else is disturbed. Each
// problem is logged once per content of the file, at level error with the
// keys path, line and error, and listed by Problems until the file is fixed.
// A folder that cannot be read at all (a volume briefly away) changes nothing
// on the bus; the provider retries until it is back.
//
// # Resync and timing
//
// On start, and after any bus error, the provider reads the resources bucket
// and deletes the keys whose origin starts with "file:" that the folder does
// not hold; keys of other origins (the Kubernetes mode sharing the bucket)
// are never deleted, but a file object with the same key overwrites them. One
// file provider per installation: two would delete each other's keys.
// File system events are gathered for 5ms after the last one (at most 100ms
// in all). Then the files they name are read again, and only the keys those
// files define, or defined, are compared and published, so that an edit
// costs what it touches, however large the folder. The whole folder is
// scanned again only for what a file event cannot explain: a folder
// created, removed or renamed, a hidden name (the link swap of a ConfigMap
// volume), lost events, and a bus error. This handles editors that write
// in bursts, rename into place or delete and recreate: an edit reaches the
// bus in a few milliseconds. Files whose content did not change are not
// decoded again.
//
// A sync waits for the folder to be quiet for 5 ms, so that the events of
// one write are read once, unless every file named since the last sync is
// known to be whole: on Linux a second inotify watch reports each file
// closed after a write or renamed into a folder, which fsnotify does not,
// and such a file is read after 0.5 ms. A file removed or renamed away
// still waits, in case it is being replaced.
//
// # Files caught mid-write
//
// A file written in place (`cat > f`, many editors) is empty or short for a
// moment. The provider never deletes an object because of that: the objects
// a file stops defining while it still exists are deleted only once the file
// has kept its content for a second (it was emptied or shortened on
// purpose), and those of a file that does not decode are kept until it
// decodes or is removed. The same holds after a restart, for the objects the
// bucket holds from a file: the provider deletes nothing of a file that is
// not settled. New and changed objects are published at once, in one batch.
//
// # Limits and repair
//
// A file larger than the limit (WithMaxFileBytes, GATEWIRE_PROVIDER_MAX_FILE_BYTES,
// default 4 MiB) is refused before it is read, as a problem that names it
// and says its size; its last good content is kept. The provider keeps
// watching the bucket: a key of its own that someone else overwrites (with
// a foreign or undecodable value) or deletes is written again at once.
package file
