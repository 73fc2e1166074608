// difypack: the plugin daemon's own packaging and upload checks, without its CLI.
//
// Built offline against dify-plugin-daemon (see assemble_vendor.py), it calls the same
// daemon functions, in the same order, as
//
//	dify plugin package <plugin_path> [-o out.difypkg] [--max-size MB]
//	  (cmd/commandline/plugin.go + cmd/commandline/plugin/package.go: PackagePlugin)
//
// and then decodes the package as the daemon does when a package is uploaded
// (internal/service/plugin_decoder.go: UploadPluginPkg, and
// internal/core/plugin_manager/packages.go: PreparePackage; those are internal packages,
// so their few calls are repeated here).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/langgenius/dify-plugin-daemon/pkg/plugin_packager/decoder"
	"github.com/langgenius/dify-plugin-daemon/pkg/plugin_packager/packager"
	"github.com/langgenius/dify-plugin-daemon/pkg/utils/log"
)

func main() {
	output := flag.String("o", "", "output path (the CLI's -o/--output_path)")
	maxSizeMB := flag.Int64("max-size", 50, "maximum uncompressed size in MB (the CLI's --max-size)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: difypack [-o out.difypkg] [-max-size MB] <plugin_path>")
		os.Exit(2)
	}

	// cmd/commandline/plugin.go, pluginPackageCommand.Run
	inputPath := filepath.Clean(flag.Arg(0))
	outputPath := *output
	if outputPath == "" {
		base := filepath.Base(inputPath)
		if base == "." || base == "/" {
			fmt.Println("Error: invalid input path, you should specify the path outside of plugin directory")
			return
		}
		outputPath = base + ".difypkg"
	}
	if *maxSizeMB <= 0 {
		*maxSizeMB = 50
	}

	// cmd/commandline/plugin/package.go, PackagePlugin
	fsDecoder, err := decoder.NewFSPluginDecoder(inputPath)
	if err != nil {
		log.Error("failed to create plugin decoder", "plugin_path", inputPath, "error", err)
		os.Exit(1)
	}
	zipFile, err := packager.NewPackager(fsDecoder).Pack(*maxSizeMB * 1024 * 1024)
	if err != nil {
		log.Error("failed to package plugin", "error", err)
		os.Exit(1)
	}
	if err := os.WriteFile(outputPath, zipFile, 0644); err != nil {
		log.Error("failed to write package file", "error", err)
		os.Exit(1)
	}
	log.Info("plugin packaged successfully", "output_path", outputPath)

	if err := uploadChecks(zipFile); err != nil {
		log.Error("the daemon would refuse this package on upload", "error", err)
		os.Exit(1)
	}
}

// uploadChecks repeats the daemon's decoding of an uploaded package (default config:
// MAX_PLUGIN_PACKAGE_SIZE 52428800, third-party signature verification off).
func uploadChecks(pkg []byte) error {
	// UploadPluginPkg
	sized, err := decoder.NewZipPluginDecoderWithSizeLimit(pkg, 52428800)
	if err != nil {
		return err
	}
	defer sized.Close()
	identity, err := sized.UniqueIdentity()
	if err != nil {
		return err
	}
	if identity.RemoteLike() {
		return errors.New("cannot set author to an UUID")
	}

	// PluginManager.PreparePackage
	zipDecoder, err := decoder.NewZipPluginDecoderWithThirdPartySignatureVerificationConfig(
		pkg, &decoder.ThirdPartySignatureVerificationConfig{Enabled: false},
	)
	if err != nil {
		return errors.Join(err, errors.New("failed to decode package"))
	}
	defer zipDecoder.Close()
	declaration, err := zipDecoder.Manifest()
	if err != nil {
		return err
	}
	if err := declaration.ManifestValidate(); err != nil {
		return errors.Join(err, fmt.Errorf("illegal plugin manifest"))
	}
	assets, err := zipDecoder.Assets()
	if err != nil {
		return err
	}
	if _, err := zipDecoder.UniqueIdentity(); err != nil {
		return err
	}
	verification, _ := zipDecoder.Verification()
	if verification == nil && zipDecoder.Verified() {
		verification = decoder.DefaultVerification()
	}

	names := []string{}
	_ = zipDecoder.Walk(func(filename, dir string) error {
		names = append(names, filepath.Join(dir, filename))
		return nil
	})
	fmt.Printf("upload checks passed: unique_identifier=%s verified=%v (unsigned: install needs FORCE_VERIFYING_SIGNATURE=false) assets=%d\n",
		identity, zipDecoder.Verified(), len(assets))
	for _, name := range names {
		fmt.Println("  " + name)
	}
	return nil
}
