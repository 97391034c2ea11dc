import ArgumentParser
import Foundation
import Logging
import OrbitAPI
import OrbitCore
import OrbitStripe
import X509

/// The payment providers of `orbitctl serve` and `orbitctl dev` (docs/operations.md, "Payment
/// providers"). Each option has an environment variable; what is missing makes its routes answer
/// 501 naming it.
struct PaymentOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Stripe's webhook signing secrets (whsec_…), one per line (two while one is rolled): POST /webhooks/stripe is answered. Default: ORBIT_STRIPE_WEBHOOK_SECRET_FILE.",
            valueName: "file"))
    var stripeWebhookSecretFile: String?

    @Option(
        help: ArgumentHelp(
            "Stripe's secret key (sk_…) in a file: the checkout routes make Checkout Sessions. Default: ORBIT_STRIPE_SECRET_KEY_FILE.",
            valueName: "file"))
    var stripeSecretKeyFile: String?

    @Option(help: ArgumentHelp("The Stripe price (price_…) of a community's subscription. Default: ORBIT_STRIPE_PRICE.", valueName: "id"))
    var stripePrice: String?

    @Option(
        help: ArgumentHelp(
            "The app's page a checkout returns the payer to (a universal link). Default: ORBIT_STRIPE_RETURN_URL, else --public-url's /checkout.",
            valueName: "url"))
    var stripeReturnURL: String?

    @Option(
        help: ArgumentHelp(
            "Apple's root certificate (AppleRootCA-G3.cer, DER or PEM): POST /webhooks/app-store verifies notifications up to it. Default: ORBIT_APP_STORE_ROOT_CERT_FILE.",
            valueName: "file"))
    var appStoreRootCertFile: String?

    @Option(
        help: ArgumentHelp(
            "The app's bundle id: notifications for another app are refused. Default: ORBIT_APP_STORE_BUNDLE_ID.", valueName: "id"))
    var appStoreBundleID: String?

    @Option(
        help: ArgumentHelp(
            "App Store environments whose notifications change subscriptions: production, sandbox or both (sandbox purchases cost nothing). Default: ORBIT_APP_STORE_ENVIRONMENT, else production.",
            valueName: "environment"))
    var appStoreEnvironment: String?

    /// An option, else its environment variable (empty counts as unset).
    static func setting(_ option: String?, _ variable: String) -> String? {
        if let option { return option }
        let value = ProcessInfo.processInfo.environment[variable]
        return value?.isEmpty == false ? value : nil
    }

    /// A file's lines that are not blank; a clear failure when it cannot be read or holds none.
    static func lines(of path: String, what: String) throws -> [String] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CommandFailure("cannot read the \(what) file \(path): \(error.localizedDescription)")
        }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !lines.isEmpty else { throw CommandFailure("The \(what) file \(path) is empty.") }
        return lines
    }

    /// Sets the providers on `configuration` and says what is on; the Stripe client, when made,
    /// is to be shut down at the end.
    func configure(_ configuration: inout APIConfiguration, publicURL: String?, logger: Logger) throws -> StripeClient? {
        if let path = Self.setting(stripeWebhookSecretFile, "ORBIT_STRIPE_WEBHOOK_SECRET_FILE") {
            configuration.stripeWebhookSecrets = try Self.lines(of: path, what: "Stripe webhook secret")
        } else {
            logger.info("no Stripe webhook secret: POST /webhooks/stripe answers 501")
        }
        configuration.appStore = try appStore(logger: logger)
        configuration.subscriptionPrice = Self.setting(stripePrice, "ORBIT_STRIPE_PRICE")
        let returnURL = Self.setting(stripeReturnURL, "ORBIT_STRIPE_RETURN_URL") ?? publicURL.map { $0 + "/checkout" }
        if let returnURL {
            guard let url = URL(string: returnURL), ["https", "http"].contains(url.scheme), url.host != nil else {
                throw CommandFailure("--stripe-return-url must be an http(s) URL, such as https://app.example.com/checkout.")
            }
            configuration.checkout = CheckoutSettings(returnURL: returnURL)
        }
        guard let path = Self.setting(stripeSecretKeyFile, "ORBIT_STRIPE_SECRET_KEY_FILE") else {
            logger.info("no Stripe secret key: the checkout routes answer 501")
            return nil
        }
        let client: StripeClient
        do {
            client = try StripeClient(configuration: try StripeConfiguration(secretKey: try Self.lines(of: path, what: "Stripe secret key")[0]))
        } catch let error as StripeConfigurationError {
            throw CommandFailure("\(path): \(error.description)")
        }
        configuration.payments = client
        logger.info(
            "checkouts go to Stripe",
            metadata: ["subscription_price": "\(configuration.subscriptionPrice ?? "none")", "return_url": "\(returnURL ?? "none")"])
        return client
    }

    /// The App Store's verifier: both settings or neither.
    func appStore(logger: Logger) throws -> AppStoreSignature? {
        let root = Self.setting(appStoreRootCertFile, "ORBIT_APP_STORE_ROOT_CERT_FILE")
        let bundle = Self.setting(appStoreBundleID, "ORBIT_APP_STORE_BUNDLE_ID")
        guard let root, let bundle else {
            if root != nil || bundle != nil {
                throw CommandFailure(
                    "App Store notifications need both --app-store-root-cert-file and --app-store-bundle-id (or ORBIT_APP_STORE_ROOT_CERT_FILE and ORBIT_APP_STORE_BUNDLE_ID)."
                )
            }
            logger.info("no App Store root certificate: POST /webhooks/app-store answers 501")
            return nil
        }
        let certificate: Certificate
        do {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: root))
            certificate = try AppStoreSignature.root(fromFile: Array(bytes))
        } catch {
            throw CommandFailure("cannot read Apple's root certificate from \(root): \(error)")
        }
        let name = Self.setting(appStoreEnvironment, "ORBIT_APP_STORE_ENVIRONMENT") ?? "production"
        guard let environments = AppStoreSignature.environments(named: name) else {
            throw CommandFailure("--app-store-environment is production, sandbox or both, not \(name).")
        }
        logger.info(
            "App Store notifications are verified",
            metadata: ["root": "\(certificate.subject)", "bundle_id": "\(bundle)", "environments": "\(environments.sorted())"])
        return AppStoreSignature(roots: [certificate], bundleID: bundle, environments: environments)
    }

    /// Closes the Stripe client's connections, saying so if that fails.
    static func close(_ client: StripeClient?, logger: Logger) async {
        guard let client else { return }
        do {
            try await client.shutdown()
        } catch {
            logger.warning("closing the Stripe client failed", metadata: ["error": "\(error)"])
        }
    }
}
