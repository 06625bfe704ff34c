<?php
// Ground truth for bench_languages.py (PHP): which files each file depends on, by PHP's own rules.
// Usage: php lang_truth.php CLASSMAP_JSON ROOT FILE...   (prints one JSON object: file -> [files])
// CLASSMAP_JSON is composer's optimized autoload class map (class name -> absolute path). Every name a
// file mentions is resolved the way PHP does (fully qualified, through `use` aliases, else relative to
// the current namespace, tokens from PHP's own tokenizer) and kept when the class map knows it.
$classmap = json_decode(file_get_contents($argv[1]), true);
$lower = [];
foreach ($classmap as $cls => $path) { $lower[strtolower($cls)] = realpath($path); }
$root = rtrim(realpath($argv[2]), '/') . '/';
$out = [];
foreach (array_slice($argv, 3) as $file) {
    $tokens = token_get_all(file_get_contents($file));
    $ns = ''; $aliases = []; $deps = [];
    $n = count($tokens);
    for ($i = 0; $i < $n; $i++) {
        $t = $tokens[$i];
        if (!is_array($t)) continue;
        if ($t[0] === T_NAMESPACE) {
            $ns = ''; $i++;
            while ($i < $n && $tokens[$i] !== ';' && $tokens[$i] !== '{') {
                if (is_array($tokens[$i]) && in_array($tokens[$i][0], [T_STRING, T_NAME_QUALIFIED])) $ns = $tokens[$i][1];
                $i++;
            }
            continue;
        }
        if ($t[0] === T_USE) {  // top-level `use A\B [as C], D;` and group `use A\{B, C};` (not closures/traits)
            $depth = 0;
            for ($k = $i - 1; $k >= 0 && is_array($tokens[$k]) && $tokens[$k][0] === T_WHITESPACE; $k--);
            $prev = $k >= 0 ? $tokens[$k] : ';';
            if ($prev === ')' ) continue;  // closure use (...)
            $stmt = '';
            for ($i++; $i < $n && $tokens[$i] !== ';'; $i++) { $stmt .= is_array($tokens[$i]) ? $tokens[$i][1] : $tokens[$i]; }
            $stmt = trim($stmt);
            if (preg_match('/^(function|const)\s/i', $stmt)) continue;
            $parts = [];
            if (preg_match('/^([^{]*)\{(.*)\}$/s', $stmt, $m)) {
                foreach (explode(',', $m[2]) as $p) { $parts[] = trim($m[1]) . trim($p); }
            } else { $parts = explode(',', $stmt); }
            foreach ($parts as $p) {
                $p = trim($p);
                if ($p === '') continue;
                $bits = preg_split('/\s+as\s+/i', $p);
                $full = ltrim(trim($bits[0]), '\\');
                $alias = isset($bits[1]) ? trim($bits[1]) : substr(strrchr('\\' . $full, '\\'), 1);
                $aliases[strtolower($alias)] = $full;
                $deps[strtolower($full)] = true;
            }
            continue;
        }
        if (in_array($t[0], [T_STRING, T_NAME_QUALIFIED, T_NAME_FULLY_QUALIFIED])) {
            for ($k = $i - 1; $k >= 0 && is_array($tokens[$k]) && $tokens[$k][0] === T_WHITESPACE; $k--);
            $before = $k >= 0 && is_array($tokens[$k]) ? $tokens[$k][0] : null;
            if (in_array($before, [T_OBJECT_OPERATOR, T_NULLSAFE_OBJECT_OPERATOR, T_DOUBLE_COLON, T_FUNCTION, T_CONST])) continue;
            $name = $t[1];
            if ($t[0] === T_NAME_FULLY_QUALIFIED) { $full = ltrim($name, '\\'); }
            else {
                $head = strtolower(explode('\\', $name)[0]);
                if (isset($aliases[$head])) {
                    $rest = substr($name, strlen($head));
                    $full = $aliases[$head] . $rest;
                } else { $full = $ns === '' ? $name : $ns . '\\' . $name; }
            }
            $deps[strtolower($full)] = true;
        }
    }
    $files = [];
    $self = realpath($file);
    foreach (array_keys($deps) as $cls) {
        if (isset($lower[$cls]) && $lower[$cls] !== $self && str_starts_with($lower[$cls], $root)) {
            $files[substr($lower[$cls], strlen($root))] = true;
        }
    }
    $out[substr($self, strlen($root))] = array_keys($files);
}
echo json_encode($out);
