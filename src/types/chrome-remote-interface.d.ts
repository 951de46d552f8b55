// Minimal typings for chrome-remote-interface (the package ships none): the parts ccb uses.
declare module "chrome-remote-interface" {
  interface CdpClient {
    send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
    on(event: string, listener: (params: Record<string, unknown>) => void): void;
    on(event: "disconnect", listener: () => void): void;
    close(): Promise<void>;
  }
  interface Options {
    host?: string;
    port?: number;
    target?: string | ((targets: { type: string; id: string; url: string }[]) => unknown);
    local?: boolean;
  }
  function CDP(options?: Options): Promise<CdpClient>;
  namespace CDP {
    export type Client = CdpClient;
    function List(options?: {
      host?: string;
      port?: number;
    }): Promise<{ type: string; id: string; url: string; webSocketDebuggerUrl: string }[]>;
  }
  export default CDP;
}
