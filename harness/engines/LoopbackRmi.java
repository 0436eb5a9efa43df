// claimcheck: TLC's distributed mode on loopback only (harness/engines/tlc_distributed.py).
//
// RMI binds every server socket (TLCServer's registry and exported objects, each TLCWorker's) to the
// wildcard address unless a socket factory says otherwise, and no system property does: this launcher
// installs one that binds to the loopback address, then runs the TLC main class it is given.
// Usage: java -cp tla2tools.jar:CLASSES LoopbackRmi tlc2.tool.distributed.TLCServer|TLCWorker ARGS...

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.rmi.server.RMISocketFactory;
import java.util.Arrays;

public final class LoopbackRmi extends RMISocketFactory {
    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        return new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return new Socket(host, port);
    }

    public static void main(String[] args) throws Exception {
        RMISocketFactory.setSocketFactory(new LoopbackRmi());
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    }
}
