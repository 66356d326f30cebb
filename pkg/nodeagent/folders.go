package nodeagent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// Disk is the group's disk as the agent sees it: Root is where the group's
// volume path is mounted; the models are in Root/models/{storage key}.
type Disk struct {
	Root string
}

// dir is the folder of a storage key.
func (d Disk) dir(key string) string { return filepath.Join(d.Root, v1alpha1.ModelsFolder, key) }

// Has reports whether a model's folder exists and holds at least one file.
func (d Disk) Has(key string) (bool, error) {
	entries, err := os.ReadDir(d.dir(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return len(entries) > 0, err
}

// Keys lists the storage keys that have a folder.
func (d Disk) Keys() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(d.Root, v1alpha1.ModelsFolder))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Remove deletes a model's folder.
func (d Disk) Remove(key string) error {
	if key == "" || filepath.Base(key) != key {
		return fmt.Errorf("refusing to remove %q: not a storage key", key)
	}
	return os.RemoveAll(d.dir(key))
}

// Ensure makes the models folder, so the claims' subPaths can be made.
func (d Disk) Ensure() error {
	return os.MkdirAll(filepath.Join(d.Root, v1alpha1.ModelsFolder), 0o775)
}

// EnsureFolder makes a model's folder, empty until a download fills it, so
// that a volume of that folder can be mounted before.
func (d Disk) EnsureFolder(key string) error {
	if key == "" || filepath.Base(key) != key {
		return fmt.Errorf("refusing to make %q: not a storage key", key)
	}
	return os.MkdirAll(d.dir(key), 0o775)
}

// IrregularFileError is a file in a model's folder that is neither a
// regular file, a directory nor a symbolic link (a FIFO, a device, a
// socket): reading one could block the agent for ever, and no model holds
// one, so the copy fails, naming it.
type IrregularFileError struct {
	Path string
	Mode fs.FileMode
}

// Error names the file and its type.
func (e *IrregularFileError) Error() string {
	return fmt.Sprintf("%s is a %s, not a regular file: a model's folder holds only files, folders and links", e.Path, fileType(e.Mode))
}

func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// Size is the bytes of a model's regular files, without reading them.
func (d Disk) Size(key string) (int64, error) {
	var size int64
	err := filepath.WalkDir(d.dir(key), func(_ string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		info, err := e.Info()
		if err == nil {
			size += info.Size()
		}
		return err
	})
	return size, err
}

// Measure returns a model's size in bytes and its digest: the SHA-256 of
// each regular file's path (relative, slash-separated) and contents, in
// path order. Symbolic links are hashed by their target, not followed. Any
// other kind of file fails the measure with an *IrregularFileError, before
// a byte is read: only regular files are ever opened.
func (d Disk) Measure(key string) (int64, string, error) {
	return d.measure(key, func(r io.Reader) io.Reader { return r })
}

// measure is Measure reading each file through wrap (a budget, a deadline).
func (d Disk) measure(key string, wrap func(io.Reader) io.Reader) (int64, string, error) {
	root := d.dir(key)
	var paths []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch t := e.Type(); {
		case t.IsDir():
		case t.IsRegular() || t&fs.ModeSymlink != 0:
			paths = append(paths, p)
		default:
			rel, _ := filepath.Rel(root, p)
			return &IrregularFileError{Path: filepath.ToSlash(rel), Mode: t}
		}
		return nil
	})
	if err != nil {
		return 0, "", err
	}
	slices.Sort(paths)
	h := sha256.New()
	var size int64
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		info, err := os.Lstat(p)
		if err != nil {
			return 0, "", err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return 0, "", err
			}
			fmt.Fprintf(h, "->%s\x00", target)
			continue
		}
		if !info.Mode().IsRegular() {
			// Replaced since the walk: still never opened.
			rel, _ := filepath.Rel(root, p)
			return 0, "", &IrregularFileError{Path: filepath.ToSlash(rel), Mode: info.Mode().Type()}
		}
		n, err := hashFile(h, p, wrap)
		if err != nil {
			return 0, "", err
		}
		size += n
	}
	return size, hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile copies a regular file into w. It opens without blocking and
// without following a link, and checks the opened file is regular: a file
// swapped for a FIFO after the walk is never read.
func hashFile(w io.Writer, p string, wrap func(io.Reader) io.Reader) (int64, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !info.Mode().IsRegular() {
		return 0, &IrregularFileError{Path: filepath.Base(p), Mode: info.Mode().Type()}
	}
	buf := make([]byte, hashBurst)
	return io.CopyBuffer(w, wrap(f), buf)
}

// Space returns the free space and the size of the disk the models folder
// is on (the agent mounts that folder alone).
func (d Disk) Space() (free, total int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Join(d.Root, v1alpha1.ModelsFolder), &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Bavail) * st.Bsize, int64(st.Blocks) * st.Bsize, nil
}
