// Ground truth for bench_languages.py (TypeScript / JavaScript): the TypeScript compiler's resolution.
// Usage: node lang_truth.js TYPESCRIPT_DIR ROOT FILE...   (prints one JSON object: file -> [files])
// Each file's imports, re-exports, require() and import() calls come from ts.preProcessFile; each is
// resolved by ts.resolveModuleName with the compiler options of the nearest tsconfig.json (Node16/Bundler
// rules, allowJs), and kept when it lands on a file of ROOT.
const path = require("path");
const fs = require("fs");
const ts = require(path.join(process.argv[2], "node_modules", "typescript"));

const root = fs.realpathSync(process.argv[3]);
const files = process.argv.slice(4);
const configs = new Map();

function optionsFor(file) {
  let dir = path.dirname(file);
  while (dir.startsWith(root)) {
    const cfg = path.join(dir, "tsconfig.json");
    if (fs.existsSync(cfg)) {
      if (!configs.has(cfg)) {
        const read = ts.readConfigFile(cfg, ts.sys.readFile);
        const parsed = ts.parseJsonConfigFileContent(read.config || {}, ts.sys, dir);
        configs.set(cfg, parsed.options);
      }
      return { allowJs: true, moduleResolution: ts.ModuleResolutionKind.Bundler, ...configs.get(cfg) };
    }
    if (dir === root) break;
    dir = path.dirname(dir);
  }
  return { allowJs: true, moduleResolution: ts.ModuleResolutionKind.Bundler, module: ts.ModuleKind.ESNext };
}

const out = {};
for (const rel of files) {
  const file = path.join(root, rel);
  const info = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
  const options = optionsFor(file);
  const deps = new Set();
  for (const ref of info.importedFiles) {
    const res = ts.resolveModuleName(ref.fileName, file, options, ts.sys).resolvedModule;
    if (!res) continue;
    const target = fs.realpathSync(res.resolvedFileName);
    if (target.startsWith(root + path.sep) && target !== file) deps.add(path.relative(root, target));
  }
  out[rel] = [...deps];
}
console.log(JSON.stringify(out));
