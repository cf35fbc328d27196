/*
 * cfi.c — the unwind rule of a return address, read from the DWARF call frame
 * information (.eh_frame) in memory (cfi.h).
 *
 * Why not libunwind's unw_step: Debian's libunwind (1.6) keeps its DWARF state
 * cache under a lock taken with every signal masked (two rt_sigprocmask calls a
 * step), looks up each frame's procedure through dl_iterate_phdr, and validates
 * the addresses it reads with mincore and a pipe write (conservative checks).
 * Here: glibc's _dl_find_object (lock-free, no system call) gives the object and
 * its .eh_frame_hdr; the header's sorted table gives the FDE (binary search); the
 * FDE's CFA program, run up to the call (return address - 1, as libunwind looks
 * it up), gives the row. Every byte read lies inside the object's loaded segment
 * that holds the header, so no address needs validating.
 *
 * The rows kept are the ones libunwind's fast trace (unw_backtrace) follows as
 * "standard" frames, so the frames found are the ones it finds: CFA = rsp or
 * rbp + a constant, the return address at CFA - 8, rbp unchanged or saved at
 * CFA + a constant, rsp not restored from anywhere else; an undefined return
 * address or rbp ends the stack (libunwind's unw_step returns 0 there). Anything
 * else (a signal frame, a CFA or register computed by an expression or kept in
 * another register, a register number libunwind refuses, CFI we cannot read) is
 * HSR_CFI_NONE, and libunwind unwinds that stack; an address no FDE covers is
 * HSR_CFI_NOFDE (libunwind's guess from rbp, or the end of the stack).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "stacks/cfi.h"

#if defined(__x86_64__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define HAVE_DL_FIND_OBJECT 1
#endif

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define REGS 17      /* libunwind's preserved registers on x86-64: a higher number fails */
#define MAX_OPS 4096 /* CFA instructions run for one lookup, at most */
#define STATES 8     /* DW_CFA_remember_state depth */

/* A cursor over bytes that may be read: [p, end) */
struct rd {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t rd_u(struct rd *r, unsigned n)
{
    uint64_t v = 0;
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    memcpy(&v, r->p, n); /* little-endian */
    r->p += n;
    return v;
}

static uint64_t rd_leb(struct rd *r, int is_signed)
{
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (r->bad || r->p >= r->end || shift > 63) {
            r->bad = 1;
            return 0;
        }
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (is_signed && shift < 64 && (b & 0x40))
                v |= ~(uint64_t)0 << shift;
            return v;
        }
    }
}

/* A pointer in DW_EH_PE encoding enc; datarel: the base of DW_EH_PE_datarel (0: not
 * allowed here). Indirect pointers are not followed (only the personality uses one,
 * and it is skipped). */
static uint64_t rd_pointer(struct rd *r, uint8_t enc, uintptr_t datarel)
{
    uintptr_t at = (uintptr_t)r->p;
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: /* absptr */
    case 0x04: /* udata8 */
    case 0x0c: /* sdata8 */
        v = rd_u(r, 8);
        break;
    case 0x01:
        v = rd_leb(r, 0);
        break;
    case 0x02:
        v = rd_u(r, 2);
        break;
    case 0x03:
        v = rd_u(r, 4);
        break;
    case 0x09:
        v = rd_leb(r, 1);
        break;
    case 0x0a:
        v = (uint64_t)(int64_t)(int16_t)rd_u(r, 2);
        break;
    case 0x0b:
        v = (uint64_t)(int64_t)(int32_t)rd_u(r, 4);
        break;
    default:
        r->bad = 1;
        return 0;
    }
    switch (enc & 0x70) {
    case 0x00:
        return v;
    case 0x10: /* pcrel */
        return v + at;
    case 0x30: /* datarel */
        if (datarel)
            return v + datarel;
        break;
    }
    r->bad = 1;
    return 0;
}

/* One CIE or FDE record at r->p: r->end becomes its end. 0: a terminator, a 64-bit
 * length (never emitted by the toolchains) or a record past the segment. */
static int rd_record(struct rd *r)
{
    uint32_t len = (uint32_t)rd_u(r, 4);
    if (r->bad || len == 0 || len == 0xffffffffu || len > (size_t)(r->end - r->p))
        return 0;
    r->end = r->p + len;
    return 1;
}

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;
    uint8_t has_z;
    struct rd ins; /* the initial instructions */
};

static int read_cie(const uint8_t *lo, const uint8_t *hi, const uint8_t *at, struct cie *c)
{
    if (at < lo || at >= hi)
        return 0;
    struct rd r = {at, hi, 0};
    if (!rd_record(&r) || rd_u(&r, 4) != 0) /* CIE id */
        return 0;
    unsigned version = (unsigned)rd_u(&r, 1);
    const uint8_t *aug = r.p;
    while (!r.bad && rd_u(&r, 1) != 0)
        ;
    if (r.bad || (version != 1 && version != 3) || (aug[0] && aug[0] != 'z'))
        return 0; /* an augmentation we cannot skip ("eh" and the like) */
    c->code_align = rd_leb(&r, 0);
    c->data_align = (int64_t)rd_leb(&r, 1);
    uint64_t ra = version == 1 ? rd_u(&r, 1) : rd_leb(&r, 0);
    if (ra != REG_RA)
        return 0;
    c->fde_enc = 0;
    c->has_z = aug[0] == 'z';
    if (c->has_z) {
        uint64_t len = rd_leb(&r, 0);
        if (r.bad || len > (size_t)(r.end - r.p))
            return 0;
        const uint8_t *data_end = r.p + len;
        for (const uint8_t *a = aug + 1; *a && !r.bad; a++) {
            if (*a == 'R') {
                c->fde_enc = (uint8_t)rd_u(&r, 1);
            } else if (*a == 'P') {
                uint8_t enc = (uint8_t)rd_u(&r, 1);
                rd_pointer(&r, enc & 0x0f, 1); /* skipped: only its size matters */
            } else if (*a == 'L') {
                rd_u(&r, 1);
            } else if (*a == 'S') {
                return 0; /* a signal frame: libunwind's */
            } else {
                break; /* unknown: the rest of the data is skipped */
            }
        }
        r.p = data_end;
    }
    c->ins = r;
    return !r.bad;
}

/* The rule of one register: unchanged, undefined, saved at CFA + off, or other. */
enum { SAME, UNDEF, AT_CFA, OTHER };
struct reg {
    uint8_t how;
    int64_t off;
};

struct row {
    uint8_t cfa_reg, cfa_expr;
    int64_t cfa_off;
    struct reg rbp, rsp, ra;
};

static struct reg *column(struct row *row, uint64_t reg)
{
    return reg == REG_RBP   ? &row->rbp
           : reg == REG_RSP ? &row->rsp
           : reg == REG_RA  ? &row->ra
                            : NULL;
}

static void restore(struct row *row, const struct row *init, uint64_t reg)
{
    if (reg == REG_RBP)
        row->rbp = init->rbp;
    else if (reg == REG_RSP)
        row->rsp = init->rsp;
    else if (reg == REG_RA)
        row->ra = init->ra;
}

static void set(struct row *row, uint64_t reg, uint8_t how, int64_t off)
{
    struct reg *col = column(row, reg);
    if (col) {
        col->how = how;
        col->off = off;
    }
}

/* A register operand: one libunwind accepts (below REGS), else the run fails. */
static uint64_t rd_reg(struct rd *r)
{
    uint64_t reg = rd_leb(r, 0);
    if (reg >= REGS)
        r->bad = 1;
    return reg;
}

/* Runs the CFA instructions of r while the location (from loc) is not past pc. */
static int run(const struct cie *c, struct rd r, struct row *row, const struct row *init,
               uint64_t loc, uint64_t pc)
{
    struct row saved[STATES];
    int depth = 0;
    for (int ops = 0; loc <= pc && r.p < r.end && !r.bad; ops++) {
        if (ops == MAX_OPS)
            return 0;
        uint8_t op = (uint8_t)rd_u(&r, 1);
        uint64_t reg = op & 0x3f;
        switch (op & 0xc0) {
        case 0x40: /* advance_loc */
            loc += reg * c->code_align;
            continue;
        case 0x80: /* offset */
            if (reg >= REGS)
                return 0;
            set(row, reg, AT_CFA, (int64_t)rd_leb(&r, 0) * c->data_align);
            continue;
        case 0xc0: /* restore */
            if (reg >= REGS)
                return 0;
            restore(row, init, reg);
            continue;
        }
        switch (op) {
        case 0x00: /* nop */
            break;
        case 0x01: /* set_loc */
            loc = rd_pointer(&r, c->fde_enc, 0);
            break;
        case 0x02:
        case 0x03:
        case 0x04: /* advance_loc1, 2, 4 */
            loc += rd_u(&r, op == 0x02 ? 1u : op == 0x03 ? 2u : 4u) * c->code_align;
            break;
        case 0x05: /* offset_extended */
            reg = rd_reg(&r);
            set(row, reg, AT_CFA, (int64_t)rd_leb(&r, 0) * c->data_align);
            break;
        case 0x06: /* restore_extended */
            reg = rd_reg(&r);
            if (!r.bad)
                restore(row, init, reg);
            break;
        case 0x07: /* undefined */
            set(row, rd_reg(&r), UNDEF, 0);
            break;
        case 0x08: /* same_value */
            set(row, rd_reg(&r), SAME, 0);
            break;
        case 0x09: /* register */
            reg = rd_reg(&r);
            rd_leb(&r, 0);
            set(row, reg, OTHER, 0);
            break;
        case 0x0a: /* remember_state */
            if (depth == STATES)
                return 0;
            saved[depth++] = *row;
            break;
        case 0x0b: /* restore_state (the CFA too, as libunwind does) */
            if (depth == 0)
                return 0;
            *row = saved[--depth];
            break;
        case 0x0c: /* def_cfa */
            row->cfa_reg = (uint8_t)rd_reg(&r);
            row->cfa_off = (int64_t)rd_leb(&r, 0);
            row->cfa_expr = 0;
            break;
        case 0x0d: /* def_cfa_register */
            row->cfa_reg = (uint8_t)rd_reg(&r);
            row->cfa_expr = 0;
            break;
        case 0x0e: /* def_cfa_offset */
            row->cfa_off = (int64_t)rd_leb(&r, 0);
            break;
        case 0x0f: { /* def_cfa_expression */
            uint64_t len = rd_leb(&r, 0);
            if (len > (size_t)(r.end - r.p))
                return 0;
            r.p += len;
            row->cfa_expr = 1;
            break;
        }
        case 0x10:   /* expression */
        case 0x16: { /* val_expression */
            reg = rd_reg(&r);
            uint64_t len = rd_leb(&r, 0);
            if (len > (size_t)(r.end - r.p))
                return 0;
            r.p += len;
            set(row, reg, OTHER, 0);
            break;
        }
        case 0x11: /* offset_extended_sf */
            reg = rd_reg(&r);
            set(row, reg, AT_CFA, (int64_t)rd_leb(&r, 1) * c->data_align);
            break;
        case 0x12: /* def_cfa_sf */
            row->cfa_reg = (uint8_t)rd_reg(&r);
            row->cfa_off = (int64_t)rd_leb(&r, 1) * c->data_align;
            row->cfa_expr = 0;
            break;
        case 0x13: /* def_cfa_offset_sf */
            row->cfa_off = (int64_t)rd_leb(&r, 1) * c->data_align;
            break;
        case 0x14: /* val_offset */
        case 0x15: /* val_offset_sf */
            reg = rd_reg(&r);
            rd_leb(&r, op == 0x15);
            set(row, reg, OTHER, 0);
            break;
        case 0x2e: /* GNU_args_size: the unwinding of a throw's, not ours */
            rd_leb(&r, 0);
            break;
        case 0x2f: /* GNU_negative_offset_extended */
            reg = rd_reg(&r);
            set(row, reg, AT_CFA, -(int64_t)rd_leb(&r, 0) * c->data_align);
            break;
        default:
            return 0;
        }
    }
    return !r.bad;
}

static int small(int64_t v, int64_t bound) { return v > -bound && v < bound; }

/* The rule of a row, as libunwind's fast trace reads it (x86_64/Gstash_frame.c). */
static struct hsr_cfi_rule rule_of(const struct row *row)
{
    struct hsr_cfi_rule rule = {.kind = HSR_CFI_NONE, .rbp_off = HSR_CFI_RBP_SAME};
    if (row->ra.how == UNDEF || row->rbp.how == UNDEF) {
        rule.kind = HSR_CFI_END;
        return rule;
    }
    if (row->cfa_expr || (row->cfa_reg != REG_RSP && row->cfa_reg != REG_RBP) ||
        !small(row->cfa_off, 1 << 28) || row->ra.how != AT_CFA || row->ra.off != -8)
        return rule;
    if (row->rsp.how == OTHER ||
        (row->rsp.how == AT_CFA && (!small(row->rsp.off, 1 << 14) || row->rsp.off == -1)))
        return rule;
    if (row->rbp.how == AT_CFA) {
        if (!small(row->rbp.off, 1 << 14) || row->rbp.off == -1)
            return rule;
        rule.rbp_off = (int16_t)row->rbp.off;
    } else if (row->rbp.how != SAME) {
        return rule;
    }
    rule.kind = row->cfa_reg == REG_RSP ? HSR_CFI_SP : HSR_CFI_RBP;
    rule.cfa_off = (int32_t)row->cfa_off;
    return rule;
}

/* The row of the FDE at fde for pc. */
static struct hsr_cfi_rule rule_at(const uint8_t *lo, const uint8_t *hi, const uint8_t *fde,
                                   uint64_t pc)
{
    struct hsr_cfi_rule none = {.kind = HSR_CFI_NONE, .rbp_off = HSR_CFI_RBP_SAME};
    struct rd r = {fde, hi, 0};
    if (!rd_record(&r))
        return none;
    const uint8_t *id_at = r.p;
    uint32_t cie_ptr = (uint32_t)rd_u(&r, 4);
    struct cie c;
    if (r.bad || cie_ptr == 0 || (uintptr_t)id_at - (uintptr_t)lo < cie_ptr ||
        !read_cie(lo, hi, id_at - cie_ptr, &c))
        return none;
    uint64_t begin = rd_pointer(&r, c.fde_enc, 0);
    uint64_t range = rd_pointer(&r, c.fde_enc & 0x0f, 0);
    if (r.bad)
        return none;
    if (pc < begin || pc - begin >= range) {
        none.kind = HSR_CFI_NOFDE; /* the nearest FDE below ends before pc */
        return none;
    }
    if (c.has_z) {
        uint64_t len = rd_leb(&r, 0);
        if (r.bad || len > (size_t)(r.end - r.p))
            return none;
        r.p += len;
    }
    const struct row same = {.cfa_reg = 0xff}; /* every register unchanged (SAME) */
    struct row init = same;
    if (!run(&c, c.ins, &init, &same, 0, UINT64_MAX))
        return none;
    struct row row = init;
    if (!run(&c, r, &row, &init, begin, pc))
        return none;
    return rule_of(&row);
}

#ifdef HAVE_DL_FIND_OBJECT
/* The loaded segment of obj holding addr, from the program headers that the
 * object's ELF header (at the start of its mapping) points to. */
static int segment_of(const struct dl_find_object *obj, uintptr_t addr, const uint8_t **lo,
                      const uint8_t **hi)
{
    uintptr_t start = (uintptr_t)obj->dlfo_map_start, end = (uintptr_t)obj->dlfo_map_end;
    const ElfW(Ehdr) *eh = obj->dlfo_map_start;
    if (end - start < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phoff > 65536 || eh->e_phnum > 256 ||
        eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > end - start)
        return 0;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(start + eh->e_phoff);
    uintptr_t bias = obj->dlfo_link_map->l_addr;
    for (int i = 0; i < eh->e_phnum; i++) {
        uintptr_t at = bias + ph[i].p_vaddr;
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_R) && addr - at < ph[i].p_filesz &&
            at >= start && at + ph[i].p_filesz <= end) {
            *lo = (const uint8_t *)at;
            *hi = (const uint8_t *)(at + ph[i].p_filesz);
            return 1;
        }
    }
    return 0;
}

/* The FDE that may cover pc (the last starting at or below it), from the binary
 * search table of .eh_frame_hdr at hdr; NULL, with *below_all set when the table
 * says none starts at or below pc. */
static const uint8_t *find_fde(const uint8_t *lo, const uint8_t *hi, const uint8_t *hdr,
                               uintptr_t pc, int *below_all)
{
    struct rd r = {hdr, hi, 0};
    uint8_t version = (uint8_t)rd_u(&r, 1), ptr_enc = (uint8_t)rd_u(&r, 1);
    uint8_t count_enc = (uint8_t)rd_u(&r, 1), table_enc = (uint8_t)rd_u(&r, 1);
    if (r.bad || version != 1 || table_enc != 0x3b || ptr_enc == 0xff || count_enc == 0xff)
        return NULL; /* no sorted table of datarel sdata4 pairs: libunwind searches */
    rd_pointer(&r, ptr_enc, (uintptr_t)hdr);
    uint64_t count = rd_pointer(&r, count_enc, (uintptr_t)hdr);
    if (r.bad || count == 0 || count > (size_t)(r.end - r.p) / 8)
        return NULL;
    const uint8_t *table = r.p;
    int64_t rel = (int64_t)(pc - (uintptr_t)hdr);
    uint64_t a = 0, b = count; /* entries before a start at or below pc, from b above */
    while (a < b) {
        uint64_t m = a + (b - a) / 2;
        int32_t start;
        memcpy(&start, table + 8 * m, 4);
        if (start <= rel)
            a = m + 1;
        else
            b = m;
    }
    if (a == 0) {
        *below_all = 1;
        return NULL;
    }
    int32_t off;
    memcpy(&off, table + 8 * (a - 1) + 4, 4);
    uintptr_t fde = (uintptr_t)hdr + (uintptr_t)(intptr_t)off;
    return fde >= (uintptr_t)lo && fde < (uintptr_t)hi ? (const uint8_t *)fde : NULL;
}
#endif

struct hsr_cfi_rule hsr_cfi_rule(uintptr_t ret)
{
    struct hsr_cfi_rule none = {.kind = HSR_CFI_NONE, .rbp_off = HSR_CFI_RBP_SAME};
#ifdef HAVE_DL_FIND_OBJECT
    uintptr_t pc = ret - 1;
    struct dl_find_object obj;
    const uint8_t *lo, *hi, *fde;
    int below_all = 0;
    if (_dl_find_object((void *)pc, &obj) != 0) {
        none.kind = HSR_CFI_NOFDE; /* in no loaded object */
        return none;
    }
    if (!obj.dlfo_eh_frame || !obj.dlfo_link_map ||
        !segment_of(&obj, (uintptr_t)obj.dlfo_eh_frame, &lo, &hi))
        return none;
    if (!(fde = find_fde(lo, hi, obj.dlfo_eh_frame, pc, &below_all))) {
        if (below_all)
            none.kind = HSR_CFI_NOFDE;
        return none;
    }
    return rule_at(lo, hi, fde, pc);
#else
    (void)ret;
    return none; /* no lock-free object lookup: libunwind unwinds */
#endif
}
