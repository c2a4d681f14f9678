/// The release this build is, as `fatchat --version` prints it and the manual page dates it.
public enum FatchatVersion {
    public static let string = "0.3.0"
}
