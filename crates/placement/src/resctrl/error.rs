//! Why resctrl cannot be used here, and why a request to it failed.
//!
//! [`Unavailable`] is the one reason a machine offers no partitioning (the
//! CPU, the kernel, the mount or the permissions); [`ResctrlError`] is
//! every failure of reading, planning or writing. This module only names
//! failures; it does not retry or work around them.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The one reason resctrl cannot be used on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// The CPU advertises no allocation feature in `/proc/cpuinfo`.
    NoRdt {
        /// Whether the CPU flags include `hypervisor` (a virtual machine).
        virtual_machine: bool,
    },
    /// The CPU has the features but the kernel has no resctrl filesystem.
    NoKernelSupport,
    /// resctrl is not mounted at the expected place (the directory is
    /// missing or empty) and no mount of it is listed in `/proc/mounts`.
    NotMounted {
        /// Where it was looked for.
        root: PathBuf,
    },
    /// The kernel refused to let this process read or change a file.
    NoPermission {
        /// The file or directory that was refused.
        path: PathBuf,
    },
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoRdt { virtual_machine } => {
                write!(
                    f,
                    "the CPU offers no cache or bandwidth allocation \
                     (no rdt_a, cat_l3, cat_l2, cdp_l3 or mba flag in /proc/cpuinfo)"
                )?;
                if *virtual_machine {
                    write!(
                        f,
                        "; this is a virtual machine, and hypervisors rarely pass RDT through"
                    )?;
                }
                Ok(())
            }
            Self::NoKernelSupport => write!(
                f,
                "the kernel has no resctrl filesystem (none in /proc/filesystems; \
                 it needs CONFIG_X86_CPU_RESCTRL)"
            ),
            Self::NotMounted { root } => write!(
                f,
                "resctrl is not mounted at {} (mount -t resctrl resctrl {}, as root)",
                root.display(),
                root.display()
            ),
            Self::NoPermission { path } => write!(
                f,
                "no permission for {} (changing resctrl groups needs root)",
                path.display()
            ),
        }
    }
}

/// What is wrong with a capacity bitmask (CBM).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MaskProblem {
    /// No bit set.
    #[error("it is empty")]
    Empty,
    /// The set bits have a gap; the hardware takes one run of ways.
    #[error("its bits are not contiguous")]
    NotContiguous,
    /// Fewer bits than `min_cbm_bits`.
    #[error("it has {bits} bit(s), fewer than min_cbm_bits {min}")]
    TooFewBits {
        /// Bits set in the mask.
        bits: u32,
        /// The resource's `min_cbm_bits`.
        min: u32,
    },
    /// Bits outside the resource's `cbm_mask`.
    #[error("it has bits outside cbm_mask {cbm_mask:x}")]
    OutsideCbmMask {
        /// The resource's `cbm_mask`.
        cbm_mask: u64,
    },
}

/// A text that could not be parsed (a schemata line, an info file).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{text}`: {reason}")]
pub struct ParseError {
    /// The offending text (a line, a value).
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl ParseError {
    pub(crate) fn new(text: &str, reason: impl Into<String>) -> Self {
        Self {
            text: text.to_string(),
            reason: reason.into(),
        }
    }
}

/// Why a resctrl operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ResctrlError {
    /// resctrl cannot be used here at all.
    #[error("{0}")]
    Unavailable(Unavailable),

    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error of the call.
        #[source]
        source: io::Error,
    },

    /// A file held text the kernel does not write.
    #[error("cannot parse {}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        #[source]
        source: ParseError,
    },

    /// A share asked for a resource this machine's resctrl does not offer.
    #[error("this machine's resctrl offers no {resource}")]
    NotOffered {
        /// The resource (`L3 cache allocation`, `memory bandwidth allocation`).
        resource: &'static str,
    },

    /// An explicit capacity bitmask the hardware would not take.
    #[error("{resource} mask {mask:x} is invalid: {problem}")]
    InvalidMask {
        /// The resource the mask is for (`L3`, `L2`).
        resource: String,
        /// The mask.
        mask: u64,
        /// What is wrong with it.
        problem: MaskProblem,
    },

    /// A share that cannot be met (too many or too few ways, a bandwidth
    /// outside what the machine allows).
    #[error("invalid share: {0}")]
    InvalidShare(String),

    /// A control group name resctrl would refuse or that is reserved.
    #[error("invalid group name `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why it is refused.
        reason: &'static str,
    },

    /// A control group of that name exists already.
    #[error("resctrl group {} exists already", path.display())]
    GroupExists {
        /// Its directory.
        path: PathBuf,
    },

    /// The kernel has no free class of service (CLOSID) for a new group.
    #[error("no free resctrl class for a new group under {} (every CLOSID is in use)", root.display())]
    NoFreeClass {
        /// The resctrl root.
        root: PathBuf,
    },

    /// The kernel refused a write; `status` is its `info/last_cmd_status`.
    #[error("the kernel refused {}: {status}", path.display())]
    Rejected {
        /// The file written.
        path: PathBuf,
        /// The kernel's explanation, or the errno when it gave none.
        status: String,
    },
}

impl ResctrlError {
    /// An I/O error on `path`; a refusal (EACCES, EPERM) becomes
    /// [`Unavailable::NoPermission`].
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        match source.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => {
                Self::Unavailable(Unavailable::NoPermission {
                    path: path.to_path_buf(),
                })
            }
            _ => Self::Io {
                path: path.to_path_buf(),
                source,
            },
        }
    }

    /// A parse failure of the file at `path`.
    pub(crate) fn parse(path: &Path, source: ParseError) -> Self {
        Self::Parse {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether this is the machine offering no resctrl (as opposed to a
    /// mistake in a request or a failed operation).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_become_no_permission() {
        let path = Path::new("/x/schemata");
        let e = ResctrlError::io(path, io::Error::from_raw_os_error(libc::EACCES));
        assert!(matches!(
            e,
            ResctrlError::Unavailable(Unavailable::NoPermission { .. })
        ));
        assert!(e.is_unavailable());
        let e = ResctrlError::io(path, io::Error::from_raw_os_error(libc::EIO));
        assert!(matches!(e, ResctrlError::Io { .. }));
        assert!(!e.is_unavailable());
    }

    #[test]
    fn reasons_read_as_one_line() {
        let vm = Unavailable::NoRdt {
            virtual_machine: true,
        }
        .to_string();
        assert!(vm.contains("/proc/cpuinfo") && vm.contains("virtual machine"));
        assert!(!vm.contains('\n'));
        let root = PathBuf::from("/sys/fs/resctrl");
        let text = Unavailable::NotMounted { root }.to_string();
        assert!(text.starts_with("resctrl is not mounted at /sys/fs/resctrl"));
    }
}
