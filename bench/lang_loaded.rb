# Ground truth for bench_languages.py (Ruby, issue 28): which files each file loads, as Ruby itself resolves
# them while the files run. Usage: ruby lang_loaded.rb ROOT LOAD_DIR -- FILE...   (prints one JSON object)
#
# `require`, `require_relative`, `load` and `autoload` (Kernel's and Module's) are wrapped: each call
# records the file it is called from and the file Ruby resolves it to — `$LOAD_PATH.resolve_feature_path`
# for require/autoload/load (the same resolver `require` uses, with every `$LOAD_PATH` addition the
# files make while they run), the caller's folder for require_relative — and then does what it always
# does. LOAD_DIR (the gem's lib/) is on the load path, as RubyGems puts it. Every file is then required
# in turn (failures are rescued: a file needing an absent gem still reports the loads it made before).
# Paths outside ROOT (the standard library, other gems) are left out. At the end every required file
# is checked against $LOADED_FEATURES (reported as `not_loaded` when a require did not load it).
require "json"
require "set"
require "timeout"

root = File.realpath(ARGV.shift) + "/"
sep = ARGV.index("--")
$LOAD_PATH.unshift(*ARGV[0...sep].map { |d| File.realpath(d) })
FILES = ARGV[(sep + 1)..].map { |f| File.realpath(f) }
EDGES = Hash.new { |h, k| h[k] = [] }
REQUIRED = []

module LoadTrace
  module_function

  def caller_file
    loc = caller_locations(2, 1)&.first
    loc && (loc.absolute_path || loc.path)
  end

  def feature(name)
    found = $LOAD_PATH.resolve_feature_path(name.to_s)
    found && found[0] == :rb ? found[1] : nil
  rescue LoadError, TypeError
    nil
  end

  def note(from, path)
    EDGES[File.realpath(from)] << File.realpath(path) if from && path && File.file?(path) && File.file?(from)
  end
end

module Kernel
  alias_method :__trace_require, :require
  alias_method :__trace_load, :load

  def require(name)
    path = LoadTrace.feature(name)
    LoadTrace.note(LoadTrace.caller_file, path)
    REQUIRED << path if path
    __trace_require(name)
  end

  def require_relative(name)
    from = LoadTrace.caller_file
    full = File.expand_path(name.to_s, File.dirname(from))
    full += ".rb" unless File.file?(full) && full.end_with?(".rb")
    LoadTrace.note(from, full)
    REQUIRED << full if File.file?(full)
    __trace_require(full)
  end

  def load(name, wrap = false)
    path = File.file?(name.to_s) ? File.expand_path(name.to_s) : LoadTrace.feature(name)
    LoadTrace.note(LoadTrace.caller_file, path)
    __trace_load(name, wrap)
  end

  private :require, :require_relative, :load
end

class Module
  alias_method :__trace_autoload, :autoload

  def autoload(const, name)
    LoadTrace.note(LoadTrace.caller_file, LoadTrace.feature(name))
    __trace_autoload(const, name)
  end
end

module Kernel
  alias_method :__trace_kernel_autoload, :autoload

  def autoload(const, name)
    LoadTrace.note(LoadTrace.caller_file, LoadTrace.feature(name))
    __trace_kernel_autoload(const, name)
  end
  private :autoload
end

$stdout = File.open(File::NULL, "w") # files that print when loaded must not break the JSON
$stderr = File.open(File::NULL, "w")
FILES.each do |file|
  begin
    Timeout.timeout(5) { require file } # an example that starts a server at load time is cut off
  rescue Exception # rubocop:disable Lint/RescueException -- SystemExit, LoadError, NameError: keep going
    nil
  end
end
$stdout = STDOUT
loaded = $LOADED_FEATURES.map { |f| File.realpath(f) rescue f }.to_set
out = {}
FILES.each do |file|
  out[file[root.size..]] = EDGES[file].uniq.select { |p| p.start_with?(root) && p != file }.map { |p| p[root.size..] }
end
not_loaded = REQUIRED.uniq.select { |p| p.start_with?(root) && !loaded.include?(File.realpath(p)) }.map { |p| p[root.size..] }
STDOUT.puts JSON.generate({ "edges" => out, "not_loaded" => not_loaded })
