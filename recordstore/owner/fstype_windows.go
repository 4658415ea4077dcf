// Windows file-system probe: a folder on a network drive (a mapped drive
// or a UNC path) is remote, whatever its file system's name.

//go:build windows

package owner

import (
	"path/filepath"

	"golang.org/x/sys/windows"
)

func fileSystemType(dir string) (name string, remote bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	root := filepath.VolumeName(abs) + `\`
	rootp, err := windows.UTF16PtrFromString(root)
	if err != nil {
		return "", false, err
	}
	fs := make([]uint16, windows.MAX_PATH+1)
	if err := windows.GetVolumeInformation(rootp, nil, 0, nil, nil, nil, &fs[0], uint32(len(fs))); err == nil {
		name = windows.UTF16ToString(fs)
	}
	if windows.GetDriveType(rootp) == windows.DRIVE_REMOTE {
		if name == "" {
			name = "a network drive"
		}
		return name, true, nil
	}
	return name, classifyName(name), nil
}
