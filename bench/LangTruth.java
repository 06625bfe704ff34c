// Ground truth for bench_languages.py (Java): javac's own name resolution.
// Usage: java LangTruth.java ROOT FILE...   (prints one JSON object: file -> [files it depends on])
// All files are parsed and attributed together (errors from libraries that are not here are ignored);
// every identifier and member selection javac resolves to a class declared in one of the given files
// (or a member of one) is a dependency on that file. With --calls, prints instead every method call javac
// resolves to a method of those files: [file, line, declaring file, Class.method] per line.
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.File;
import java.nio.file.Path;
import java.util.*;
import javax.lang.model.element.*;
import javax.tools.*;

public class LangTruth {
    public static void main(String[] args) throws Exception {
        boolean calls = args[0].equals("--calls");
        if (calls) args = Arrays.copyOfRange(args, 1, args.length);
        Path root = Path.of(args[0]).toRealPath();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null);
        List<File> files = new ArrayList<>();
        for (int i = 1; i < args.length; i++) files.add(new File(args[i]));
        DiagnosticCollector<JavaFileObject> quiet = new DiagnosticCollector<>();
        JavacTask task = (JavacTask) javac.getTask(null, fm, quiet,
                List.of("-proc:none", "-implicit:none", "-Xmaxerrs", "0", "-d", System.getProperty("java.io.tmpdir")),
                null, fm.getJavaFileObjectsFromFiles(files));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        Trees trees = Trees.instance(task);
        Map<TypeElement, String> fileOf = new HashMap<>();
        for (CompilationUnitTree unit : units) {
            for (Tree decl : unit.getTypeDecls()) {
                Element e = trees.getElement(TreePath.getPath(unit, decl));
                if (e instanceof TypeElement t) fileOf.put(t, rel(root, unit));
            }
        }
        if (calls) {
            printCalls(units, trees, fileOf, root);
            return;
        }
        StringBuilder out = new StringBuilder("{");
        boolean first = true;
        for (CompilationUnitTree unit : units) {
            String self = rel(root, unit);
            Set<String> deps = new TreeSet<>();
            new TreePathScanner<Void, Void>() {
                void note(TreePath path) {
                    Element e = trees.getElement(path);
                    while (e != null && !(e instanceof TypeElement && e.getEnclosingElement() instanceof PackageElement)) {
                        e = e.getEnclosingElement();
                    }
                    if (e != null) {
                        String f = fileOf.get(e);
                        if (f != null && !f.equals(self)) deps.add(f);
                    }
                }
                @Override public Void visitIdentifier(IdentifierTree t, Void v) { note(getCurrentPath()); return super.visitIdentifier(t, v); }
                @Override public Void visitMemberSelect(MemberSelectTree t, Void v) { note(getCurrentPath()); return super.visitMemberSelect(t, v); }
            }.scan(unit, null);
            if (!first) out.append(",");
            first = false;
            out.append(json(self)).append(":[");
            int i = 0;
            for (String d : deps) out.append(i++ > 0 ? "," : "").append(json(d));
            out.append("]");
        }
        System.out.println(out.append("}"));
    }

    static void printCalls(Iterable<? extends CompilationUnitTree> units, Trees trees,
                           Map<TypeElement, String> fileOf, Path root) {
        StringBuilder out = new StringBuilder();
        for (CompilationUnitTree unit : units) {
            String self = rel(root, unit);
            new TreePathScanner<Void, Void>() {
                @Override public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
                    Element e = trees.getElement(getCurrentPath());
                    if (e instanceof ExecutableElement m && m.getEnclosingElement() instanceof TypeElement owner) {
                        Element top = owner;
                        while (!(top.getEnclosingElement() instanceof PackageElement)) top = top.getEnclosingElement();
                        String f = fileOf.get(top);
                        if (f != null) {
                            long line = unit.getLineMap().getLineNumber(trees.getSourcePositions().getStartPosition(unit, t));
                            out.append(json(self)).append("\t").append(line).append("\t").append(json(f)).append("\t")
                               .append(json(owner.getSimpleName() + "." + m.getSimpleName())).append("\n");
                        }
                    }
                    return super.visitMethodInvocation(t, v);
                }
            }.scan(unit, null);
        }
        System.out.print(out);
    }

    static String rel(Path root, CompilationUnitTree unit) {
        try {
            return root.relativize(Path.of(unit.getSourceFile().toUri()).toRealPath()).toString();
        } catch (Exception e) {
            return unit.getSourceFile().getName();
        }
    }

    static String json(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
