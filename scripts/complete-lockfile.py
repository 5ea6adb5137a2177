# npm on this registry leaves platform-specific optional packages it cannot fetch (other OSes/CPUs) out of
# package-lock.json, and `npm ci` then refuses the lockfile ("Missing: ... from lock file", npm/cli#4828).
# This adds an entry (version, os, cpu, optional) for each such package, so `npm ci` skips them as for another
# platform. Run it after every `npm install` that rewrites the lockfile: python3 scripts/complete-lockfile.py
import json, re, sys
lock = json.load(open('package-lock.json'))
pk = lock['packages']
added = []
oses = ['android','darwin','freebsd','linux','openbsd','win32','openharmony','sunos','netbsd','aix']
for path, meta in list(pk.items()):
    for dep, spec in (meta.get('optionalDependencies') or {}).items():
        # where npm would look for it: nested under the parent first, else hoisted at the root
        nested = f"{path}/node_modules/{dep}" if path else f"node_modules/{dep}"
        hoisted = f"node_modules/{dep}"
        if nested in pk or hoisted in pk: continue
        name = dep.split('/')[-1]
        os_ = next((o for o in oses if re.search(rf'(^|-){o}(-|$)', name)), None)
        cpu = None
        for c, pat in [('arm64', r'arm64'), ('x64', r'(^|-)x64(-|$)'), ('ia32', r'ia32'), ('loong64', r'loong64'), ('ppc64', r'ppc64'), ('riscv64', r'riscv64'), ('s390x', r's390x'), ('arm', r'(^|-)arm(-|$)')]:
            if re.search(pat, name): cpu = c; break
        if os_ is None or cpu is None:
            print('cannot infer platform of', dep, file=sys.stderr); sys.exit(1)
        entry = {'version': spec, 'optional': True, 'os': [os_], 'cpu': [cpu]}
        if 'musl' in name: entry['libc'] = ['musl']
        if meta.get('dev'): entry['dev'] = True
        if meta.get('devOptional'): entry['devOptional'] = True
        pk[hoisted] = entry
        added.append(hoisted)
json.dump(lock, open('package-lock.json', 'w'), indent=2)
open('package-lock.json', 'a').write('\n')
print(len(added), 'entries added:', ', '.join(a.split('node_modules/')[-1] for a in added))
