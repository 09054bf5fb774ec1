WARNING:  directory "/tmp/hbs/mnt_btrfs/W_posix_fallocate" is on btrfs, a copy-on-write filesystem: preallocation reserves nothing lasting and recycling forces read-modify-write of old blocks; set walseg.recycle = off
LOG:  WAL in "/tmp/hbs/mnt_btrfs/W_posix_fallocate": 88 records, resuming at 0/197870
