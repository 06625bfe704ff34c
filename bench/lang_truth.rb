# Ground truth for bench_languages.py (Ruby): which files each file loads, by Ruby's own rules.
# Usage: ruby lang_truth.rb ROOT LOAD_DIR... -- FILE...   (prints one JSON object: file -> [files])
# Ruby's lexer (Ripper) finds `require`, `require_relative` and `autoload` calls with a literal path;
# `require_relative` is read from the file's folder, the others along the load path given (the gem's
# `lib/`), each with Ruby's `.rb` rule. Paths that are not files of ROOT are left out (the standard
# library, other gems).
require "ripper"
require "json"

root = File.realpath(ARGV.shift) + "/"
sep = ARGV.index("--")
load_path = ARGV[0...sep].map { |d| File.realpath(d) }
files = ARGV[(sep + 1)..]

def feature(load_path, name)
  name = name.end_with?(".rb") ? name : "#{name}.rb"
  load_path.each do |dir|
    path = File.join(dir, name)
    return File.realpath(path) if File.file?(path)
  end
  nil
end

out = {}
files.each do |file|
  tokens = Ripper.lex(File.read(file)).reject { |(_, type, _)| %i[on_sp on_lparen on_ignored_nl].include?(type) }
  deps = []
  tokens.each_with_index do |(_, type, text), i|
    next unless type == :on_ident && %w[require require_relative autoload].include?(text)
    prev = i.positive? ? tokens[i - 1] : nil
    next if prev && prev[1] == :on_period # a method of something else
    rest = tokens[(i + 1)..(i + 6)] || []
    if text == "autoload" # autoload :Name, "path"
      comma = rest.index { |t| t[1] == :on_comma }
      next unless comma
      rest = rest[(comma + 1)..]
    end
    next unless rest[0] && rest[0][1] == :on_tstring_beg && rest[1] && rest[1][1] == :on_tstring_content
    next unless rest[2] && rest[2][1] == :on_tstring_end # no interpolation
    name = rest[1][2]
    path = if text == "require_relative"
             feature([File.dirname(File.realpath(file))], name)
           else
             feature(load_path, name)
           end
    deps << path[root.size..] if path&.start_with?(root) && path != File.realpath(file)
  end
  out[File.realpath(file)[root.size..]] = deps.uniq
end
puts JSON.generate(out)
