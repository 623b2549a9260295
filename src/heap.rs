//! The binary's heap: a bump arena in front of the C allocator, for
//! SQLite and for Rust.
//!
//! One command opens the store, parses its schema, runs a few statements
//! and exits. On the way SQLite makes about 700 allocations (the parsed
//! schema alone is several hundred small objects) and the CLI a few
//! hundred more, and a third of them are freed. Through glibc's `malloc`
//! and `free` that cost about 0.2 M instructions of a 1.5 M `context` on
//! 1,000 tasks (BENCHMARKS.md, "Seventh pass"). Here an allocation is one
//! atomic bump of an offset into a fixed region, and a free gives its
//! bytes back only when it is the latest allocation, which much of what
//! is freed is (a statement's parse tree, a string built and dropped).
//!
//! The bound is what makes this safe in a process that lives long (the
//! MCP server, a hook waiting on its host): once the region is used up,
//! every further allocation goes to `malloc`, so the arena holds at most
//! [`ARENA_BYTES`] that a free did not give back, however long the
//! process runs. The region is in `.bss`, so a page of it costs memory
//! only once it is written.
//!
//! Alignment: the region and every block size are multiples of 16 and 8,
//! so every arena pointer is 8-aligned, which is what SQLite requires; a
//! Rust allocation that asks for more goes to the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use rusqlite::ffi;

/// The arena's size. A `context` or a mutation on 1,000 tasks uses about
/// a third of it.
const ARENA_BYTES: usize = 2 << 20;

/// The alignment of every arena block.
const ALIGN: usize = 8;

/// The size of the header before each of SQLite's blocks, which holds the
/// block's usable size (SQLite asks for it; Rust passes it back).
const HEADER: usize = 8;

#[repr(C, align(16))]
struct Region(UnsafeCell<[u8; ARENA_BYTES]>);

// SAFETY: the region is only reached through `ARENA`, which hands each
// byte out to one block at a time.
unsafe impl Sync for Region {}

static REGION: Region = Region(UnsafeCell::new([0; ARENA_BYTES]));

static ARENA: Arena = Arena {
    // The region's bytes are in an `UnsafeCell`, so they may be written
    // through a pointer made from a shared one.
    start: (&raw const REGION).cast_mut().cast(),
    len: ARENA_BYTES,
    top: AtomicUsize::new(0),
};

/// A region of `len` bytes at `start`, handed out from its low end: `top`
/// is the offset of the first byte not in a block.
struct Arena {
    start: *mut u8,
    len: usize,
    top: AtomicUsize,
}

// SAFETY: `top` is only moved by atomic operations, and a byte below it
// belongs to the one block that bumped past it. A block given back
// (release) and bumped again by another thread (acquire) is the one hand
// over of bytes between threads: what the first thread wrote to them
// happens before what the second writes.
unsafe impl Sync for Arena {}

impl Arena {
    /// Whether `p` points into the region.
    fn contains(&self, p: *const u8) -> bool {
        let start = self.start as usize;
        (start..start + self.len).contains(&(p as usize))
    }

    /// A block of `size` bytes (a multiple of [`ALIGN`]), or `None` when
    /// the region has no room left for it.
    fn bump(&self, size: usize) -> Option<*mut u8> {
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            let end = top.checked_add(size).filter(|&end| end <= self.len)?;
            match self
                .top
                .compare_exchange_weak(top, end, Ordering::Acquire, Ordering::Relaxed)
            {
                // SAFETY: `top..end` is within the region.
                Ok(_) => return Some(unsafe { self.start.add(top) }),
                Err(now) => top = now,
            }
        }
    }

    /// Takes back the block of `size` bytes at `p` if it is the latest.
    fn give_back(&self, p: *mut u8, size: usize) {
        let offset = p as usize - self.start as usize;
        // A block that is not the latest stays used: its bytes are lost
        // to the arena, not to the process.
        let _ =
            self.top
                .compare_exchange(offset + size, offset, Ordering::Release, Ordering::Relaxed);
    }

    /// Grows or shrinks the block of `old` bytes at `p` to `new` bytes in
    /// place, which is possible when it is the latest and the region has
    /// room; returns whether it did.
    fn resize_in_place(&self, p: *mut u8, old: usize, new: usize) -> bool {
        let offset = p as usize - self.start as usize;
        match offset.checked_add(new) {
            Some(end) if end <= self.len => self
                .top
                .compare_exchange(offset + old, end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok(),
            _ => false,
        }
    }
}

/// `n` rounded up to a multiple of [`ALIGN`].
fn round(n: usize) -> Option<usize> {
    n.checked_add(ALIGN - 1).map(|n| n & !(ALIGN - 1))
}

/// SQLite's side: blocks with a size header, from `arena` while it has
/// room and from `malloc` after.
#[cfg_attr(test, allow(dead_code))]
mod sqlite {
    use super::*;

    /// A block of `size` usable bytes (a multiple of [`ALIGN`]), or null
    /// when neither the arena nor `malloc` has one.
    pub(super) fn allocate(arena: &Arena, size: usize) -> *mut u8 {
        let Some(need) = size.checked_add(HEADER) else {
            return std::ptr::null_mut();
        };
        let start = match arena.bump(need) {
            Some(p) => p,
            None => {
                // SAFETY: plain malloc; the header is written below.
                let p: *mut u8 = unsafe { libc::malloc(need) }.cast();
                if p.is_null() {
                    return p;
                }
                p
            }
        };
        // SAFETY: `start` has `need` bytes and is 8-aligned (an arena
        // block, or malloc's, which aligns to 16).
        unsafe {
            start.cast::<u64>().write(size as u64);
            start.add(HEADER)
        }
    }

    /// The usable size of block `p`.
    ///
    /// # Safety
    /// `p` is a live block of this heap.
    pub(super) unsafe fn size(p: *mut u8) -> usize {
        // SAFETY: every block is preceded by its header.
        unsafe { p.sub(HEADER).cast::<u64>().read() as usize }
    }

    /// Frees block `p`: to `malloc` if it came from there, else back to
    /// the arena if it is the latest block.
    ///
    /// # Safety
    /// `p` is a live block of this heap, allocated with `arena`.
    pub(super) unsafe fn release(arena: &Arena, p: *mut u8) {
        // SAFETY: `p` is a live block with its header before it.
        let (start, size) = unsafe { (p.sub(HEADER), size(p)) };
        if arena.contains(p) {
            arena.give_back(start, size + HEADER);
        } else {
            // SAFETY: the block was `malloc`ed at its header.
            unsafe { libc::free(start.cast()) };
        }
    }

    /// Block `p` resized to at least `new` usable bytes: in place when it
    /// is already that big or is the arena's latest block, else a copy.
    ///
    /// # Safety
    /// `p` is a live block of this heap, allocated with `arena`.
    pub(super) unsafe fn resize(arena: &Arena, p: *mut u8, new: usize) -> *mut u8 {
        // SAFETY: `p` is a live block.
        let old = unsafe { size(p) };
        if new <= old {
            return p;
        }
        // SAFETY: the header is part of the block.
        let start = unsafe { p.sub(HEADER) };
        if arena.contains(p) && arena.resize_in_place(start, old + HEADER, new + HEADER) {
            // SAFETY: the block now spans `new` usable bytes.
            unsafe { start.cast::<u64>().write(new as u64) };
            return p;
        }
        let q = allocate(arena, new);
        if !q.is_null() {
            // SAFETY: both blocks are live and at least `old` bytes long,
            // and distinct blocks never overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(p, q, old);
                release(arena, p);
            }
        }
        q
    }

    /// A request size from SQLite, rounded, or `None` for one it never
    /// makes (zero or negative).
    fn request(n: c_int) -> Option<usize> {
        usize::try_from(n).ok().filter(|&n| n > 0).and_then(round)
    }

    unsafe extern "C" fn x_malloc(n: c_int) -> *mut c_void {
        request(n).map_or(std::ptr::null_mut(), |size| allocate(&ARENA, size).cast())
    }

    unsafe extern "C" fn x_free(p: *mut c_void) {
        if !p.is_null() {
            // SAFETY: SQLite frees only what it allocated here, once.
            unsafe { release(&ARENA, p.cast()) }
        }
    }

    unsafe extern "C" fn x_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
        let Some(size) = request(n) else {
            return std::ptr::null_mut();
        };
        if p.is_null() {
            return allocate(&ARENA, size).cast();
        }
        // SAFETY: SQLite resizes only live blocks it allocated here.
        unsafe { resize(&ARENA, p.cast(), size).cast() }
    }

    unsafe extern "C" fn x_size(p: *mut c_void) -> c_int {
        if p.is_null() {
            return 0;
        }
        // SAFETY: SQLite asks only about live blocks it allocated here.
        c_int::try_from(unsafe { size(p.cast()) }).unwrap_or(c_int::MAX)
    }

    unsafe extern "C" fn x_roundup(n: c_int) -> c_int {
        request(n)
            .and_then(|n| c_int::try_from(n).ok())
            .unwrap_or(n)
    }

    unsafe extern "C" fn x_init(_: *mut c_void) -> c_int {
        ffi::SQLITE_OK
    }

    unsafe extern "C" fn x_shutdown(_: *mut c_void) {}

    /// The methods to hand to `sqlite3_config`.
    pub(super) fn methods() -> ffi::sqlite3_mem_methods {
        ffi::sqlite3_mem_methods {
            xMalloc: Some(x_malloc),
            xFree: Some(x_free),
            xRealloc: Some(x_realloc),
            xSize: Some(x_size),
            xRoundup: Some(x_roundup),
            xInit: Some(x_init),
            xShutdown: Some(x_shutdown),
            pAppData: std::ptr::null_mut(),
        }
    }
}

/// Configures SQLite's memory for a process like this one, before SQLite
/// starts:
///
/// - its memory statistics are off: SQLite would count every allocation
///   (for `sqlite3_memory_used` and a soft heap limit, which goalkeeper
///   uses neither of) under a global mutex, about 1,100 lock and unlock
///   pairs in one `context`, 85 K instructions of every command that opens
///   the store;
/// - the arena is its heap;
/// - no lookaside buffer and no bulk page-cache block per connection: each
///   is a block SQLite carves into slots up front, writing to every one,
///   so a command touched 11 pages of lookaside and 20 pages of page
///   cache, page faults whether it used them or not (a `context` on 1,000
///   tasks uses about half of those pages). The arena hands out small
///   blocks as cheaply as the lookaside did.
///
/// # Safety
/// No thread is using SQLite yet, and no other thread is configuring it:
/// `sqlite3_config` may run only before SQLite starts (afterwards it
/// refuses with SQLITE_MISUSE and changes nothing).
#[cfg(not(test))]
pub(crate) unsafe fn configure_sqlite() {
    let methods = sqlite::methods();
    // SAFETY: the caller's promise. SQLite copies the methods; the
    // lookaside takes a slot size and count, the page cache a buffer, a
    // slot size and a count (no buffer and no slots: pages are allocated
    // one at a time from the heap).
    unsafe {
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int);
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &raw const methods);
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_LOOKASIDE, 0 as c_int, 0 as c_int);
        ffi::sqlite3_config(
            ffi::SQLITE_CONFIG_PAGECACHE,
            std::ptr::null_mut::<c_void>(),
            0 as c_int,
            0 as c_int,
        );
    }
}

/// Rust's side: the global allocator of the binary. Rust passes a
/// block's layout back on every free, so its blocks carry no header.
pub(crate) struct Heap;

/// The arena size of a Rust block of `layout`, when the arena can hold
/// it (alignment at most [`ALIGN`]).
fn arena_size(layout: Layout) -> Option<usize> {
    (layout.align() <= ALIGN)
        .then(|| round(layout.size()))
        .flatten()
}

// The methods are not inlined: with whole-program LTO every allocation
// site would get its own copy, 0.7 MB of code in all.
//
// SAFETY: every block is either an arena block of at least the layout's
// size at an 8-aligned address (used only for alignments up to 8), or
// the system allocator's; each is freed by the side that made it, told
// apart by its address.
unsafe impl GlobalAlloc for Heap {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match arena_size(layout).and_then(|size| ARENA.bump(size)) {
            Some(p) => p,
            // SAFETY: the caller's layout, as given.
            None => unsafe { System.alloc(layout) },
        }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if ARENA.contains(p) {
            if let Some(size) = arena_size(layout) {
                ARENA.give_back(p, size);
            }
        } else {
            // SAFETY: a system block, with the layout it was made with.
            unsafe { System.dealloc(p, layout) }
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !ARENA.contains(p) {
            // SAFETY: a system block, with the layout it was made with.
            return unsafe { System.realloc(p, layout, new_size) };
        }
        let (Some(old), Some(new)) = (arena_size(layout), round(new_size)) else {
            return std::ptr::null_mut();
        };
        if new <= old || ARENA.resize_in_place(p, old, new) {
            return p;
        }
        // SAFETY: a valid layout: the old alignment, and a size the
        // caller promises does not overflow it.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a nonzero size, as the caller promises.
        let q = unsafe { self.alloc(new_layout) };
        if !q.is_null() {
            // SAFETY: both blocks are live and at least `layout.size()`
            // long; distinct blocks never overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(p, q, layout.size());
                self.dealloc(p, layout);
            }
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arena of `len` bytes of its own, never freed.
    fn arena(len: usize) -> Arena {
        let words = vec![0u64; len / 8].leak();
        Arena {
            start: words.as_mut_ptr().cast(),
            len,
            top: AtomicUsize::new(0),
        }
    }

    #[test]
    fn only_the_latest_block_is_given_back() {
        let a = arena(64);
        let x = a.bump(16).unwrap();
        let y = a.bump(16).unwrap();
        assert_eq!(y as usize - x as usize, 16);
        a.give_back(x, 16);
        assert_eq!(a.top.load(Ordering::Relaxed), 32, "x is not the latest");
        a.give_back(y, 16);
        assert_eq!(a.top.load(Ordering::Relaxed), 16);
        assert_eq!(a.bump(16), Some(y), "y's bytes are handed out again");
    }

    #[test]
    fn a_full_arena_hands_out_nothing_and_keeps_its_top() {
        let a = arena(64);
        assert!(a.bump(48).is_some());
        assert_eq!(a.bump(24), None);
        assert_eq!(a.top.load(Ordering::Relaxed), 48);
        assert!(a.bump(16).is_some(), "what fits still fits");
        assert_eq!(a.bump(8), None);
        assert_eq!(a.bump(usize::MAX), None, "no overflow on a huge request");
    }

    #[test]
    fn only_the_latest_block_grows_in_place_and_only_within_the_region() {
        let a = arena(64);
        let x = a.bump(16).unwrap();
        assert!(a.resize_in_place(x, 16, 40));
        assert_eq!(a.top.load(Ordering::Relaxed), 40);
        assert!(!a.resize_in_place(x, 40, 72), "past the region's end");
        let y = a.bump(8).unwrap();
        assert!(!a.resize_in_place(x, 40, 48), "x is no longer the latest");
        assert!(a.resize_in_place(y, 8, 24));
        assert_eq!(a.top.load(Ordering::Relaxed), 64);
    }

    #[test]
    fn sqlite_blocks_keep_their_size_and_content_when_moved_out_of_a_full_arena() {
        let a = arena(64);
        let p = sqlite::allocate(&a, 24);
        assert!(a.contains(p));
        // SAFETY: `p` is a live 24-byte block.
        unsafe {
            assert_eq!(sqlite::size(p), 24);
            p.copy_from(b"0123456789abcdefghijklmn".as_ptr(), 24);
            let same = sqlite::resize(&a, p, 48);
            assert_eq!(same, p, "the latest block grows in place");
            assert_eq!(sqlite::size(p), 48);
            // No room left: the block moves to malloc, with its bytes.
            let q = sqlite::resize(&a, p, 96);
            assert!(!q.is_null() && !a.contains(q));
            assert_eq!(sqlite::size(q), 96);
            assert_eq!(
                std::slice::from_raw_parts(q, 24),
                b"0123456789abcdefghijklmn"
            );
            assert_eq!(
                a.top.load(Ordering::Relaxed),
                0,
                "the moved block was given back"
            );
            // A malloc block is freed by free, the arena untouched.
            let r = sqlite::allocate(&a, 56);
            assert!(a.contains(r), "the arena is used again once it has room");
            let s = sqlite::allocate(&a, 8);
            assert!(!s.is_null() && !a.contains(s));
            sqlite::release(&a, s);
            sqlite::release(&a, q);
            assert_eq!(a.top.load(Ordering::Relaxed), 64);
            sqlite::release(&a, r);
            assert_eq!(a.top.load(Ordering::Relaxed), 0);
        }
    }

    #[test]
    fn blocks_bumped_from_many_threads_never_overlap() {
        let a = arena(1 << 16);
        let mut offsets: Vec<usize> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..1024)
                            .map_while(|_| a.bump(24))
                            .map(|p| p as usize - a.start as usize)
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        offsets.sort_unstable();
        assert_eq!(offsets.len(), (1 << 16) / 24, "the region is filled");
        assert!(offsets.windows(2).all(|w| w[1] - w[0] >= 24));
    }

    #[test]
    fn the_global_allocator_falls_back_to_the_system_for_wide_alignments() {
        let layout = Layout::from_size_align(64, 64).unwrap();
        assert_eq!(arena_size(layout), None);
        assert_eq!(
            arena_size(Layout::from_size_align(13, 8).unwrap()),
            Some(16)
        );
        // SAFETY: a nonzero layout, freed with itself.
        unsafe {
            let p = Heap.alloc(layout);
            assert!(!p.is_null() && !ARENA.contains(p));
            assert_eq!(p as usize % 64, 0);
            Heap.dealloc(p, layout);
        }
    }
}
