import { chatPageHtml } from '../../src/http/chat-page';

it("serves a chat page whose script parses, with the config inlined and '<' escaped", () => {
  const html = chatPageHtml({ workflowUrlPrefix: 'http://ui/</script><script>alert(1)</script>' });
  const script = html.slice(html.indexOf('<script>') + '<script>'.length, html.lastIndexOf('</script>'));
  expect(() => new Function(script)).not.toThrow();
  expect(script).toContain(
    'window.DURABLE_AGENTS = {"workflowUrlPrefix":"http://ui/\\u003c/script>\\u003cscript>alert(1)\\u003c/script>"};',
  );
});
