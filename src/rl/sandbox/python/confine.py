# The `landlock` isolation level (Landlock ABI 3, Linux 6.2+, no package to install): after the limits, and before
# any user code runs, the process confines itself and everything it starts, for good:
# - Landlock file-system rules: the system folders and the interpreter's installation readable and
#   executable; the work folder fully writable; /dev/null, /dev/zero and /dev/urandom read and write;
#   nothing else, so no /proc of other processes, no home folder, no /tmp, and no way round through a
#   symbolic link (Landlock checks the file reached, not the path written);
# - Landlock network rules (ABI 4+): no TCP bind or connect;
# - Landlock scopes (ABI 6+): no signal to a process outside the sandbox, no abstract Unix socket
#   of one outside it;
# - no new privileges (set-uid programs do not elevate), and a seccomp filter: no socket() of any
#   family (a named Unix socket outside the sandbox — a session bus, a container engine, an agent —
#   is reachable through connect(), which Landlock before ABI 9 does not check; socketpair() stays),
#   no change of a file's mode, owner, times or extended attributes (Landlock does not check them, so
#   they would reach the user's files; refused in the work folder too), no new namespaces (unshare,
#   setns, clone with a namespace flag), no ptrace or process_vm_readv/writev, no mount, bpf,
#   perf_event_open, userfaultfd, io_uring, keyctl or kernel-module calls.
# Landlock ABI 3 (Linux 6.2) is the floor: below it Landlock cannot refuse truncating a file outside
# the work folder.
# confine() raises OSError naming what the kernel refused; landlock_abi() says what the kernel offers.
# common.py is put in front of this file (os and sys come from there).
import ctypes, platform, struct

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture

def _fail(what):
    e = ctypes.get_errno()
    raise OSError(e, '%s: %s' % (what, os.strerror(e)))

def landlock_abi():
    # LANDLOCK_CREATE_RULESET_VERSION: the ABI version, or -1 (ENOSYS: no Landlock; EOPNOTSUPP: disabled at boot)
    v = _libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), ctypes.c_void_p(None), ctypes.c_size_t(0), ctypes.c_uint32(1))
    return int(v) if v > 0 else 0

# Landlock's file-system rights (include/uapi/linux/landlock.h)
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15

def _fs_rights(abi):
    # ABI 1's execute … make_sym, ABI 2's refer and ABI 3's truncate (3 is confine()'s floor), ABI 5's ioctl_dev
    return ((1 << 13) - 1) | _REFER | _TRUNCATE | (_IOCTL_DEV if abi >= 5 else 0)

def readable_roots(extra=()):
    # the system, the interpreter's own installation (a pyenv or conda interpreter lives elsewhere) and
    # a toolchain's folders outside the system ones (`extra`)
    roots = ['/usr', '/etc', '/lib', '/lib64', '/lib32', '/bin', '/sbin'] + [p for p in extra if p.startswith('/')]
    for p in (sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable))):
        if p and p not in roots:
            roots.append(p)
    return roots

def _landlock(cwd, abi, extra):
    handled = _fs_rights(abi)
    net = 3 if abi >= 4 else 0  # BIND_TCP | CONNECT_TCP, with no rule allowing any port
    scoped = 3 if abi >= 6 else 0  # ABSTRACT_UNIX_SOCKET | SIGNAL
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    attr = ctypes.create_string_buffer(struct.pack('<QQQ', handled, net, scoped)[:size], size)
    fd = _libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), attr, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        _fail('landlock_create_ruleset')
    file_rw = _READ_FILE | _WRITE_FILE | _TRUNCATE | (_IOCTL_DEV if abi >= 5 else 0)
    rules = [(p, _EXECUTE | _READ_FILE | _READ_DIR) for p in readable_roots(extra)]
    rules += [(p, file_rw) for p in ('/dev/null', '/dev/zero', '/dev/urandom')]
    rules.append((cwd, handled))
    try:
        for path, rights in rules:
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a folder this system does not have
            try:
                if not os.path.isdir(path):
                    rights &= _EXECUTE | _READ_FILE | _WRITE_FILE | _TRUNCATE | _IOCTL_DEV  # the rights a file can take
                rule = ctypes.create_string_buffer(struct.pack('<Qi', rights, pfd), 12)  # landlock_path_beneath_attr, packed
                if _libc.syscall(ctypes.c_long(_SYS_ADD_RULE), ctypes.c_int(fd), ctypes.c_int(1), rule, ctypes.c_uint32(0)) < 0:
                    _fail('landlock_add_rule(%s)' % path)
            finally:
                os.close(pfd)
        if _libc.syscall(ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint32(0)) < 0:
            _fail('landlock_restrict_self')
    finally:
        os.close(fd)

# seccomp: the architecture's audit number, the system calls refused (EPERM; socket: EAFNOSUPPORT),
# and clone's number (refused only with a namespace flag)
_ARCHES = {
    'x86_64': (0xC000003E, {
        'ptrace': 101, 'process_vm_readv': 310, 'process_vm_writev': 311, 'unshare': 272, 'setns': 308,
        'mount': 165, 'umount2': 166, 'pivot_root': 155, 'chroot': 161, 'keyctl': 250, 'add_key': 248,
        'request_key': 249, 'bpf': 321, 'perf_event_open': 298, 'userfaultfd': 323, 'kexec_load': 246,
        'kexec_file_load': 320, 'init_module': 175, 'finit_module': 313, 'delete_module': 176,
        'name_to_handle_at': 303, 'open_by_handle_at': 304, 'syslog': 103, 'acct': 163, 'swapon': 167,
        'swapoff': 168, 'reboot': 169, 'sethostname': 170, 'setdomainname': 171, 'iopl': 172, 'ioperm': 173,
        'quotactl': 179, 'socket': 41,
        'chmod': 90, 'fchmod': 91, 'fchmodat': 268, 'chown': 92, 'fchown': 93, 'lchown': 94, 'fchownat': 260,
        'utime': 132, 'utimes': 235, 'futimesat': 261, 'utimensat': 280, 'setxattr': 188, 'lsetxattr': 189,
        'fsetxattr': 190, 'removexattr': 197, 'lremovexattr': 198, 'fremovexattr': 199}, 56),
    'aarch64': (0xC00000B7, {
        'ptrace': 117, 'process_vm_readv': 270, 'process_vm_writev': 271, 'unshare': 97, 'setns': 268,
        'mount': 40, 'umount2': 39, 'pivot_root': 41, 'chroot': 51, 'keyctl': 219, 'add_key': 217,
        'request_key': 218, 'bpf': 280, 'perf_event_open': 241, 'userfaultfd': 282, 'kexec_load': 104,
        'kexec_file_load': 294, 'init_module': 105, 'finit_module': 273, 'delete_module': 106,
        'name_to_handle_at': 264, 'open_by_handle_at': 265, 'syslog': 116, 'acct': 89, 'swapon': 224,
        'swapoff': 225, 'reboot': 142, 'sethostname': 161, 'setdomainname': 162, 'quotactl': 60, 'socket': 198,
        'fchmod': 52, 'fchmodat': 53, 'fchownat': 54, 'fchown': 55, 'utimensat': 88, 'setxattr': 5,
        'lsetxattr': 6, 'fsetxattr': 7, 'removexattr': 14, 'lremovexattr': 15, 'fremovexattr': 16},
        220),
}
# numbered alike on every architecture: io_uring (which performs network and file operations outside
# seccomp's view), the new mount API, and clone3 (refused with ENOSYS: the C library falls back to clone,
# whose flags the filter can read)
_COMMON_DENIED = {'io_uring_setup': 425, 'io_uring_enter': 426, 'io_uring_register': 427, 'open_tree': 428,
                  'move_mount': 429, 'fsopen': 430, 'fsconfig': 431, 'fsmount': 432, 'fspick': 433, 'mount_setattr': 442,
                  'fchmodat2': 452, 'setxattrat': 463, 'removexattrat': 466}
_CLONE3 = 435
_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
_EPERM, _ENOSYS, _EAFNOSUPPORT = 1, 38, 97
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000

def seccomp_program(machine):
    # a classic BPF program over struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]}
    if machine not in _ARCHES:
        raise OSError(_ENOSYS, 'no seccomp table for the %s architecture (x86_64 and aarch64 have one)' % machine)
    arch, denied, clone_nr = _ARCHES[machine]
    LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, JGE, JSET, BPF_RET|K
    ins = []
    def op(code, k, jt=0, jf=0):
        ins.append((code, jt, jf, k))
    op(LD, 4)  # arch
    op(JEQ, arch, 1, 0)
    op(RET, _RET_KILL_PROCESS)
    op(LD, 0)  # nr
    if machine == 'x86_64':
        op(JGE, 0x40000000, 0, 1)  # the x32 ABI's numbers
        op(RET, _RET_ERRNO | _EPERM)
    for name, nr in sorted(set(denied.items()) | set(_COMMON_DENIED.items()), key=lambda x: x[1]):
        op(JEQ, nr, 0, 1)
        op(RET, _RET_ERRNO | (_EAFNOSUPPORT if name == 'socket' else _EPERM))
    op(JEQ, _CLONE3, 0, 1)
    op(RET, _RET_ERRNO | _ENOSYS)
    op(JEQ, clone_nr, 0, 3)
    op(LD, 16)  # args[0]: the clone flags
    op(JSET, _NAMESPACE_FLAGS, 0, 1)
    op(RET, _RET_ERRNO | _EPERM)
    op(RET, _RET_ALLOW)
    return b''.join(struct.pack('<HBBI', *i) for i in ins)

def _seccomp():
    prog = seccomp_program(platform.machine())
    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = struct.pack('<HxxxxxxQ', len(prog) // 8, ctypes.addressof(buf))  # struct sock_fprog
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    if _libc.prctl(22, 2, fbuf, 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        _fail('seccomp')

MIN_ABI = 3

def confine(cwd, extra=()):
    abi = landlock_abi()
    if abi < 1:
        raise OSError(_ENOSYS, 'the kernel has no Landlock (Linux 5.13 or newer, with landlock in its lsm= list)')
    if abi < MIN_ABI:
        raise OSError(_ENOSYS, 'Landlock ABI %d cannot refuse truncating files outside the work folder (ABI 3, Linux 6.2, can)' % abi)
    if _libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        _fail('no_new_privs')
    _landlock(cwd, abi, extra)
    _seccomp()
    return abi
