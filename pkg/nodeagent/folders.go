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

// Measure returns a model's size in bytes and its digest: the SHA-256 of
// each regular file's path (relative, slash-separated) and contents, in
// path order. Symbolic links are hashed by their target, not followed.
func (d Disk) Measure(key string) (int64, string, error) {
	root := d.dir(key)
	var paths []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			paths = append(paths, p)
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
		n, err := hashFile(h, p)
		if err != nil {
			return 0, "", err
		}
		size += n
	}
	return size, hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(w io.Writer, p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

// Space returns the free space and the size of the disk.
func (d Disk) Space() (free, total int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(d.Root, &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Bavail) * st.Bsize, int64(st.Blocks) * st.Bsize, nil
}
