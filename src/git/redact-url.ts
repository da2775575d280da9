/** A git URL fit to print: a password or token in it (`https://user:token@host/…`) is replaced by `***`. */
export function redactUrl(url: string): string {
  return url.replace(
    /^([a-z][a-z0-9+.-]*:\/\/)([^/@]*)@/i,
    (_, scheme: string, userinfo: string) => `${scheme}${userinfo.includes(':') ? `${userinfo.split(':')[0]}:***` : '***'}@`,
  );
}
