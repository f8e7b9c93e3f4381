/**
 * svc-stub in JUnit 5 tests: {@link dev.svcstub.junit.SvcStubExtension} starts one stub for the
 * test run and gives each test a {@link dev.svcstub.junit.SvcStub}, a namespace of its own, with
 * typed {@linkplain dev.svcstub.junit.Fault faults}, fixtures, and the journal waited for and
 * asserted.
 *
 * <pre>{@code
 * @ExtendWith(SvcStubExtension.class)
 * class CheckoutTest {
 *     @Test
 *     void fallsBackWhileEvaluateFails(SvcStub stub) {
 *         Checkout checkout = new Checkout(stub.url());
 *         try (ArmedFault outage = stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE))) {
 *             assertEquals("control", checkout.variant("user-1"));
 *         }
 *         stub.assertNoRequest(Route.CAPTURE);
 *     }
 * }
 * }</pre>
 */
package dev.svcstub.junit;
