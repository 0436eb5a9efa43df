// claimcheck: TLC that writes its state graph while it checks (harness/engines/tlcgraph.py).
//
// Why: the twin = TLC comparison needs TLC's reachable states and labelled edges. TLC 2.15 writes them
// with `-dump dot,actionlabels`, but a dot dump lays out every state's values (Values.ppr) and, when
// liveness is checked, also writes the liveness graph (tableau node x state, each state printed again:
// 40 MiB beside the graph's 4.7 MiB on `heartbeat`); so the gate ran TLC twice
// on `ci`, once to check and once to dump. This launcher runs TLC exactly as tlc2.TLC's main does, with
// this writer in place of the dump's: not a dot writer, so TLC gives liveness a no-op writer, and each
// variable's value is printed once per distinct value (keyed by TLC's own 64-bit value fingerprint).
//
// The file, one record a line:
//   N var1 var2 ...            the variables, in TLC's order
//   V k id text                variable k's value `id` (numbered per variable) prints as `text`
//   S fp id1 id2 ...           a distinct state: its fingerprint and each variable's value id
//   E fp1 fp2 Action           a transition TLC generated (self-loops and repeats included)
// Initial states are the S lines written before the first E line whose source they are; the first S line
// is an initial state.
// Usage: java -cp tla2tools.jar:CLASSES StateGraphWriter OUT TLC-ARGS...

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import tla2sany.semantic.OpDeclNode;
import tlc2.TLC;
import tlc2.output.EC;
import tlc2.tool.Action;
import tlc2.tool.TLCState;
import tlc2.util.BitVector;
import tlc2.util.FP64;
import tlc2.util.IStateWriter;
import tlc2.value.IValue;
import util.FileUtil;
import util.MailSender;
import util.SimpleFilenameToStream;
import util.UniqueString;

public final class StateGraphWriter implements IStateWriter {
    private final String path;
    private final PrintWriter out;
    private UniqueString[] names;
    private Map<Long, Integer>[] ids;  // per variable: value fingerprint -> the id written for it

    StateGraphWriter(String path) throws IOException {
        this.path = path;
        this.out = new PrintWriter(new BufferedWriter(new FileWriter(path), 1 << 20));
    }

    @SuppressWarnings("unchecked")
    private void header(TLCState state) {
        OpDeclNode[] vars = state.getVars();
        names = new UniqueString[vars.length];
        ids = new Map[vars.length];
        StringBuilder line = new StringBuilder("N");
        for (int k = 0; k < vars.length; k++) {
            names[k] = vars[k].getName();
            ids[k] = new HashMap<>();
            line.append(' ').append(names[k]);
        }
        out.println(line);
    }

    private void node(TLCState state, long fp) {
        if (names == null) {
            header(state);
        }
        StringBuilder line = new StringBuilder("S ").append(fp);
        for (int k = 0; k < names.length; k++) {
            IValue v = state.lookup(names[k]);
            long vfp = v.fingerPrint(FP64.New());
            Integer id = ids[k].get(vfp);
            if (id == null) {
                id = ids[k].size();
                ids[k].put(vfp, id);
                out.append("V ").append(Integer.toString(k)).append(' ').append(Integer.toString(id)).append(' ')
                   .append(v.toString().replace('\n', ' ')).append('\n');
            }
            line.append(' ').append(id);
        }
        out.append(line).append('\n');
    }

    @Override
    public synchronized void writeState(TLCState state) {  // an initial state
        node(state, state.fingerPrint());
    }

    @Override
    public synchronized void writeState(TLCState state, TLCState successor, boolean successorIsNew, Action action) {
        long to = successor.fingerPrint();
        if (successorIsNew) {
            node(successor, to);
        }
        out.append("E ").append(Long.toString(state.fingerPrint())).append(' ').append(Long.toString(to)).append(' ')
           .append(action.getName().toString()).append('\n');
    }

    @Override
    public synchronized void writeState(TLCState state, TLCState successor, boolean successorIsNew) {
        writeState(state, successor, successorIsNew, (Action) null);  // not called by TLC's BFS with actions named
    }

    @Override
    public void writeState(TLCState state, TLCState successor, boolean successorIsNew, Visualization v) {
        // a stuttering step (the same state): the comparison drops self-loops on both sides
    }

    @Override
    public void writeState(TLCState s, TLCState t, BitVector b, int i, int j, boolean isNew) {
    }

    @Override
    public void writeState(TLCState s, TLCState t, BitVector b, int i, int j, boolean isNew, Visualization v) {
    }

    @Override
    public synchronized void close() {
        out.close();
    }

    @Override
    public String getDumpFileName() {
        return path;
    }

    @Override
    public boolean isNoop() {
        return false;
    }

    @Override
    public boolean isDot() {
        return false;  // so TLC's liveness checker writes nothing (LiveCheck: a dot writer gets a liveness dump)
    }

    @Override
    public void snapshot() {
    }

    /** tlc2.TLC.main, step for step, with this writer set between reading the options and checking. */
    public static void main(String[] args) throws Exception {
        TLC tlc = new TLC();
        if (!tlc.handleParameters(Arrays.copyOfRange(args, 1, args.length))) {
            System.exit(1);
        }
        Method check = TLC.class.getDeclaredMethod("checkEnvironment");
        check.setAccessible(true);
        if (!(Boolean) check.invoke(tlc)) {
            System.exit(1);
        }
        Field writer = TLC.class.getDeclaredField("stateWriter");
        writer.setAccessible(true);
        StateGraphWriter graph = new StateGraphWriter(args[0]);
        writer.set(tlc, graph);
        Runtime.getRuntime().addShutdownHook(new Thread(graph::close));  // flushed also when TLC stops early
        MailSender mail = new MailSender();
        String dir = FileUtil.parseDirname(tlc.getMainFile());
        tlc.setResolver(dir.isEmpty() ? new SimpleFilenameToStream() : new SimpleFilenameToStream(dir));
        mail.setModelName(tlc.getModelName());
        mail.setSpecName(tlc.getSpecName());
        int code = tlc.process();
        if (!mail.send(tlc.getModuleFiles())) {
            System.exit(1);
        }
        System.exit(EC.ExitStatus.errorConstantToExitStatus(code));
    }
}
