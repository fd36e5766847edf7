/*
 * Privatized globals (`tandem cc --privatize`): the program's written
 * global and static variables, named by tandem cc, get a copy per virtual
 * rank. Their addresses come from the executable's own symbol table
 * (/proc/self/exe), placed by the address of a symbol whose address the
 * program gives (TMPI_private_names itself); their contents are swapped
 * whenever another rank of the process starts to run, which is sound only
 * while one rank runs at a time (one core per process).
 */
#include "virt/private.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char *at;
    size_t size;
} range;

static range *ranges;
static int range_count;
static size_t total;   /* bytes of every range together */
static char *copies;   /* 'total' bytes per rank */
static int owner = -1; /* the rank whose values are in place */

static int by_address(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Whether a section holds data the program writes at run time: .data and
   .bss and their subsections, not .data.rel.ro (read-only once relocated). */
static int written_section(const char *name)
{
    if (strncmp(name, ".data.rel.ro", 12) == 0)
        return 0;
    return strcmp(name, ".data") == 0 || strcmp(name, ".bss") == 0 ||
           strncmp(name, ".data.", 6) == 0 || strncmp(name, ".bss.", 5) == 0;
}

static int named(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

int tdm_virt_private_find(const char *const *names, const void *anchor, const char *anchor_name,
                          char *why, size_t why_size)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot read the program (/proc/self/exe)");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    const unsigned char *file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (file == MAP_FAILED) {
        snprintf(why, why_size, "cannot map the program (/proc/self/exe)");
        return -1;
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(file + eh->e_shoff);
    const Elf64_Shdr *symtab = NULL;
    for (int i = 0; i < eh->e_shnum; i++)
        if (sections[i].sh_type == SHT_SYMTAB)
            symtab = &sections[i];
    int status = -1;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) {
        snprintf(why, why_size, "the program is not a 64-bit ELF file");
    } else if (!symtab) {
        snprintf(why, why_size, "the program has no symbol table (linked with -s, or stripped)");
    } else {
        const char *section_names = (const char *)(file + sections[eh->e_shstrndx].sh_offset);
        const char *strings = (const char *)(file + sections[symtab->sh_link].sh_offset);
        const Elf64_Sym *syms = (const Elf64_Sym *)(file + symtab->sh_offset);
        size_t count = symtab->sh_size / sizeof *syms;
        /* The load address: where the anchor is against where the file says. */
        intptr_t base = 0;
        int found_anchor = 0;
        for (size_t i = 0; i < count && !found_anchor; i++)
            if (strcmp(strings + syms[i].st_name, anchor_name) == 0) {
                base = (intptr_t)anchor - (intptr_t)syms[i].st_value;
                found_anchor = 1;
            }
        ranges = calloc(count + 1, sizeof *ranges);
        if (!found_anchor) {
            snprintf(why, why_size, "the program's symbol table lacks %s", anchor_name);
        } else if (ranges) {
            for (size_t i = 0; i < count; i++) {
                const Elf64_Sym *s = &syms[i];
                if (ELF64_ST_TYPE(s->st_info) != STT_OBJECT || s->st_size == 0 ||
                    s->st_shndx == SHN_UNDEF || s->st_shndx >= eh->e_shnum)
                    continue;
                if (!written_section(section_names + sections[s->st_shndx].sh_name) ||
                    !named(names, strings + s->st_name))
                    continue;
                ranges[range_count++] = (range){(char *)(base + (intptr_t)s->st_value), s->st_size};
            }
            status = 0;
        } else {
            snprintf(why, why_size, "no memory");
        }
    }
    munmap((void *)file, (size_t)st.st_size);
    if (status != 0)
        return status;
    /* In address order, overlaps and neighbours merged. */
    qsort(ranges, (size_t)range_count, sizeof *ranges, by_address);
    int kept = 0;
    for (int i = 0; i < range_count; i++) {
        if (kept && ranges[i].at <= ranges[kept - 1].at + ranges[kept - 1].size) {
            char *end = ranges[i].at + ranges[i].size;
            char *last = ranges[kept - 1].at + ranges[kept - 1].size;
            if (end > last)
                ranges[kept - 1].size += (size_t)(end - last);
        } else {
            ranges[kept++] = ranges[i];
        }
    }
    range_count = kept;
    total = 0;
    for (int i = 0; i < range_count; i++)
        total += ranges[i].size;
    return 0;
}

size_t tdm_virt_private_bytes(void)
{
    return total;
}

int tdm_virt_private_start(int ranks)
{
    copies = malloc(total * (size_t)ranks + 1);
    if (!copies)
        return -1;
    /* Every rank starts from the values the program's initialisation left. */
    for (int r = 0; r < ranks; r++) {
        char *to = copies + total * (size_t)r;
        for (int i = 0; i < range_count; i++) {
            memcpy(to, ranges[i].at, ranges[i].size);
            to += ranges[i].size;
        }
    }
    owner = -1;
    return 0;
}

void tdm_virt_private_enter(int rank)
{
    if (rank == owner || !copies)
        return;
    if (owner >= 0) {
        char *to = copies + total * (size_t)owner;
        for (int i = 0; i < range_count; i++) {
            memcpy(to, ranges[i].at, ranges[i].size);
            to += ranges[i].size;
        }
    }
    const char *from = copies + total * (size_t)rank;
    for (int i = 0; i < range_count; i++) {
        memcpy(ranges[i].at, from, ranges[i].size);
        from += ranges[i].size;
    }
    owner = rank;
}

void tdm_virt_private_finish(void)
{
    free(copies);
    free(ranges);
    copies = NULL;
    ranges = NULL;
    range_count = 0;
    total = 0;
    owner = -1;
}

/* One copy: a file in memory holding the image, loaded from its path; its
   descriptor in *fd, to close once every copy is loaded (the loader takes
   a path it has loaded already for the same object: each copy needs a
   path of its own). */
static void *load_one(const void *image, size_t bytes, int rank, int *fd, char *why,
                      size_t why_size)
{
    char name[64];
    snprintf(name, sizeof name, "tandem-virtual-rank-%d", rank);
    *fd = memfd_create(name, MFD_CLOEXEC);
    if (*fd < 0) {
        snprintf(why, why_size, "cannot make a file in memory for rank %d's copy: %s", rank,
                 strerror(errno));
        return NULL;
    }
    for (size_t done = 0; done < bytes;) {
        ssize_t n = write(*fd, (const char *)image + done, bytes - done);
        if (n <= 0) {
            snprintf(why, why_size, "cannot write rank %d's copy: %s", rank,
                     n < 0 ? strerror(errno) : "no room");
            return NULL;
        }
        done += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", *fd);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        snprintf(why, why_size, "cannot load rank %d's copy: %s", rank, dlerror());
    return handle;
}

int tdm_virt_private_load(const void *image, size_t bytes, int count, tdm_virt_copy *loaded,
                          char *why, size_t why_size)
{
    static const struct {
        const char *name;
        int kind;
    } entries[] = {{"TMPI_Main", TDM_VIRT_ENTRY_MAIN},
                   {"_Z9TMPI_Mainv", TDM_VIRT_ENTRY_VOID},
                   {"TMPI_main", TDM_VIRT_ENTRY_TINYMPI}};
    int *fds = malloc(sizeof *fds * (size_t)count), status = 0, opened = 0;
    if (!fds) {
        snprintf(why, why_size, "no memory");
        return -1;
    }
    for (int r = 0; r < count && status == 0; r++) {
        void *handle = load_one(image, bytes, r, &fds[r], why, why_size);
        opened += fds[r] >= 0;
        if (!handle) {
            status = -1;
            break;
        }
        loaded[r].entry = NULL;
        for (size_t i = 0; i < sizeof entries / sizeof entries[0] && !loaded[r].entry; i++) {
            loaded[r].entry = dlsym(handle, entries[i].name);
            loaded[r].kind = entries[i].kind;
        }
        if (!loaded[r].entry) {
            snprintf(why, why_size, "the program's copy has no main (nor TinyMPI's TMPI_main)");
            status = -1;
        }
    }
    for (int r = 0; r < opened; r++)
        close(fds[r]); /* the loader keeps its mappings */
    free(fds);
    return status;
}
